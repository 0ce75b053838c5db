import LMDBRealmFormat
import LMDBRealmStorage

extension Realm {
    /// The error LMDBRealm throws: ``RealmError``, under the name RealmSwift code uses.
    ///
    /// ```swift
    /// do {
    ///     try realm.write { realm.add(article) }
    /// } catch let error as Realm.Error where error.code == .mapFull {
    ///     // the file reached Configuration.maximumFileSize
    /// }
    /// ```
    public typealias Error = RealmError
}
