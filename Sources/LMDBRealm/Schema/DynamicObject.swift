import LMDBRealmFormat
import LMDBRealmStorage

/// An object of a stored class read without its Swift class: by property name, from the
/// schema stored in the file. What a tool that opens any file works with (an inspector, an
/// export), and what RealmSwift's dynamic API returns.
///
/// ```swift
/// let realm = try Realm(configuration: .init(fileURL: url))     // no model classes listed
/// for article in realm.dynamicObjects("Article").filter("wordCount > 500") {
///     print(article["headline"] as? String ?? "", article.wordCount ?? 0)
/// }
/// let author = realm.dynamicObject(ofType: "Author", forPrimaryKey: "Ann")
/// try realm.write { author?["name"] = "Ann B." }
/// ```
///
/// A value reads as its Swift type (`Int`, `String`, `Double`, `Date`, …), `nil` for a null;
/// a link as the linked `DynamicObject`; a list or set as an array of its elements, a map as a
/// dictionary, `LinkingObjects` as an array of the linking objects. Setting takes the same
/// kinds, inside a write; a link is set to a managed object of its class.
@dynamicMemberLookup
public final class DynamicObject: Object {
    /// The values set on an object that is not stored (one a failed write returned).
    var unmanagedValues: [String: Any?] = [:]

    /// The value of property `member`: `object.headline` reads as `object["headline"]`.
    public subscript(dynamicMember member: String) -> Any? {
        get { self[member] }
        set { self[member] = newValue }
    }
}
