import LMDBRealmFormat
import LMDBRealmStorage

/// The base class of model classes.
///
/// Subclass it, declare stored properties with ``Persisted``, and give every property a
/// default (or none, to start from its type's default):
///
/// ```swift
/// final class Dog: Object {
///     @Persisted(primaryKey: true) var name: String
///     @Persisted var age = 0
///     @Persisted var birthday: Date?
/// }
/// let dog = Dog()
/// dog.name = "Rex"
/// try realm.write { realm.add(dog) }   // dog is now managed: a live view of its record
/// ```
///
/// An object is *unmanaged* until it is added to a realm: a plain Swift object, usable on any
/// thread. Once added it is *managed*: reads come from the realm's snapshot, writes need a write
/// transaction, and it belongs to its realm's thread, queue or actor.
open class Object {
    /// Creates an unmanaged object whose properties hold their defaults.
    public required init() {
        ColumnCounter.reset()
    }

    /// An unmanaged object whose properties are taken from `value`, as RealmSwift's: a
    /// dictionary of values by property name, an array of them in property order, or another
    /// object (a detached copy). A linked object or a list's element may itself be given as a
    /// dictionary or an array; properties not given keep their defaults.
    /// - Precondition: Each value given fits its property.
    public required convenience init(value: Any) {
        self.init()
        _fill(value: value)
    }

    // MARK: - Managed state (nil realm: unmanaged)

    /// The realm that manages this object; set by `add` and by every accessor the store makes.
    // Exclusivity is unchecked on this state: it is confined to the realm's thread (checked
    // on every access), and the dynamic checks cost 5-10% of a property read.
    @exclusivity(unchecked) @usableFromInline final var _realm: Realm?
    /// The table and column mapping of a managed object.
    @exclusivity(unchecked) final var _binding: TableBinding?
    /// The object's key in its table.
    @exclusivity(unchecked) final var _key = ObjectKey()
    /// The object's record, borrowed from the realm's current version; valid while its
    /// generation is the realm's.
    @exclusivity(unchecked) final var _record = BorrowedRecord()

    /// Whether property reads and writes go through `_readField`/`_writeField`: true for
    /// managed objects, and for the key-path recorder (see ``ClassInfo/propertyName(for:)``).
    @exclusivity(unchecked) @usableFromInline final var _isManaged = false

    // MARK: - Public surface

    /// The realm managing this object, or `nil` while it is unmanaged.
    public var realm: Realm? { _realm }

    /// The name the class is stored under: the Swift class name without its module, so two
    /// modules that declare the same model share a file. Override to choose another.
    open class func className() -> String {
        String(describing: self)
    }

    /// Groups of properties to index together, each listed in its order; none by default.
    ///
    /// A query that tests every property of a group but the last for equality and sorts by
    /// the last reads the matching objects from the group's index, already in order, and
    /// stops at a limit: "the newest 50 notes of a folder" reads 50 objects, however many the
    /// folder holds.
    ///
    /// ```swift
    /// class Note: Object {
    ///     @Persisted var folder: String
    ///     @Persisted var created: Date
    ///     override class func compoundIndexes() -> [[String]] { [["folder", "created"]] }
    /// }
    /// let newest = realm.objects(Note.self).where { $0.folder == "inbox" }
    ///     .sorted(byKeyPath: "created", ascending: false).prefix(50)
    /// ```
    ///
    /// Each group names two or more distinct properties of kinds that can be indexed (bool,
    /// int, string, date, `ObjectId`, `UUID`, and enums and custom types stored as those).
    /// Adding or removing a group needs no migration: the index is built or emptied when the
    /// realm opens. `explain()` shows when a query uses one. RealmSwift has no such indexes.
    open class func compoundIndexes() -> [[String]] { [] }

    /// Groups of properties to index together, as ``compoundIndexes()`` does, in an index that
    /// also holds a copy of each object's record; none by default.
    ///
    /// A query the index answers reads its objects from the index itself, one page after
    /// another, instead of looking each one up among the class's objects: "the newest 50 notes
    /// of a folder" reads two or three pages rather than 50 places of the file. The price is
    /// paid on writes and in space: every change to an object, of any property, writes its copy
    /// too, and each object is stored twice. Choose it for the few queries a service
    /// runs most, on classes whose objects are small: an object whose record (with its key)
    /// does not fit in 509 bytes keeps only its key there and is looked up as in a compound
    /// index.
    ///
    /// ```swift
    /// class Note: Object {
    ///     @Persisted var folder: String
    ///     @Persisted var created: Date
    ///     @Persisted var title: String
    ///     override class func coveringIndexes() -> [[String]] { [["folder", "created"]] }
    /// }
    /// ```
    ///
    /// A group names two or more distinct properties of the kinds ``compoundIndexes()``
    /// allows, and not a group it also names. Adding or removing one needs no migration, as for
    /// compound indexes; `explain()` shows when a query uses one.
    open class func coveringIndexes() -> [[String]] { [] }

    /// The persisted properties of this object's class.
    public var objectSchema: ObjectSchema {
        _classInfo.schema
    }

    /// The persisted properties of this class.
    public class func sharedSchema() -> ObjectSchema {
        ClassInfo.of(self).schema
    }

    /// The class name and every persisted property's value, one per line, as RealmSwift prints
    /// an object.
    open var description: String { _describe() }
}

extension Object: CustomStringConvertible {}

@available(*, unavailable, message: "a managed Object belongs to its realm's thread; pass a ThreadSafeReference or its primary key")
extension Object: Sendable {}
