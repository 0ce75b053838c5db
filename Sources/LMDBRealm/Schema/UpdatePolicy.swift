/// What `add` does when an object with the same primary key is already stored.
public enum UpdatePolicy: Sendable {
    /// Throw ``RealmError/Code/primaryKeyExists`` (the default).
    case error
    /// Overwrite the stored object's properties that differ.
    case modified
    /// Overwrite every property of the stored object.
    case all
}
