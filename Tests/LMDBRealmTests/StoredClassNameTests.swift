import Foundation
import Testing

/// The test target's model classes share one process, and a class is found by its stored name
/// (a query through a link, a migration without `objectTypes`): two suites whose classes are
/// stored under one name would meet each other's class, depending on the order tests run in.
/// Classes that share a name on purpose (two releases of one model) live in one file.
@Suite struct StoredClassNameTests {
    @Test func everyStoredClassNameIsDeclaredInOneFile() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        #expect(files.count > 20)
        let declaration = try Regex(#"^(?:final\s+)?class\s+(\w+)\s*:\s*(?:Object|EmbeddedObject)\b"#)
        let override = try Regex(#"className\(\)\s*->\s*String\s*\{\s*"([^"]+)"\s*\}"#)
        var filesByName: [String: Set<String>] = [:]
        for file in files {
            var current: (swiftName: String, storedName: String)?
            func finish() {
                if let current { filesByName[current.storedName, default: []].insert(file.lastPathComponent) }
            }
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                let text = line.trimmingCharacters(in: .whitespaces)
                if let match = try declaration.firstMatch(in: text), let name = match.output[1].substring {
                    finish()
                    current = (String(name), String(name))
                } else if let match = try override.firstMatch(in: text), let name = match.output[1].substring, current != nil {
                    current!.storedName = String(name)
                }
            }
            finish()
        }
        #expect(filesByName.count > 30)
        // QueryTests' ArticleReindexed is a later release of Models' Article (an index moved),
        // opened on its own file; nothing links to Article, so no query looks it up by name.
        let intended: Set = ["Article"]
        let shared = filesByName.filter { $0.value.count > 1 && !intended.contains($0.key) }
        #expect(shared.isEmpty, "stored class names declared in more than one file: \(shared)")
    }
}
