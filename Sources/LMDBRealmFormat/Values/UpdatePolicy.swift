/// What `add` does when an object with the same primary key is already stored.
/// (Its raw values are RealmSwift's.)
public enum UpdatePolicy: Int, Sendable {
    /// Throw ``RealmError/Code/primaryKeyExists`` (the default).
    case error = 1
    /// Overwrite the stored object's properties that differ.
    case modified = 3
    /// Overwrite every property of the stored object.
    case all = 2
}
