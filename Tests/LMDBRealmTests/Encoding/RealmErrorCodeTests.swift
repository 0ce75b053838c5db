import Foundation
import Testing

import LMDBRealm
import TestSupport

/// `RealmError`'s codes are listed once, in `RealmError.Code`; `RealmError` repeats each as a
/// static so that `catch RealmError.mapFull` reads as RealmSwift's `catch Realm.Error.…`.
@Suite struct RealmErrorCodeTests {
    /// Every code has its `catch` static on `RealmError`, and no static names a code that does
    /// not exist: the two lists in RealmError.swift must not drift apart.
    @Test func everyCodeCanBeCaughtByName() throws {
        let source = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "../../../Sources/LMDBRealmFormat/Values/RealmError.swift"),
            encoding: .utf8)
        func names(_ pattern: String) throws -> Set<String> {
            let regex = try Regex(pattern)
            return Set(source.matches(of: regex).compactMap { $0.output[1].substring.map(String.init) })
        }
        let codes = try names(#"public static let (\w+) = (?:Code\(rawValue:|noSpace|incompatibleVersion|invalidValue)"#)
        let statics = try names(#"public static let (\w+) = Code\.\w+"#)
        #expect(!codes.isEmpty)
        #expect(codes == statics, "codes without a static: \(codes.subtracting(statics).sorted()); statics without a code: \(statics.subtracting(codes).sorted())")
    }

    @Test func anEncryptionKeyIsCaughtByItsCode() throws {
        try withTemporaryDirectory { directory in
            var config = Realm.Configuration(fileURL: directory.appendingPathComponent("secret.realm"))
            config.encryptionKey = Data(count: 64)
            do {
                _ = try Realm(configuration: config)
                Issue.record("an encryption key was accepted")
            } catch RealmError.encryptionNotSupported {
                // the code's static matches
            }
        }
    }
}
