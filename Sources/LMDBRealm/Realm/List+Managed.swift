import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

extension List {
    /// The realm managing the list's object, or `nil` while it is unmanaged.
    public var realm: Realm? { owner?.realm }
}

// The managed side of `List`: a list is read from the realm's current version through its
// object's key, and written through the write session.
extension Object {
    /// The current table binding and the databases and stored column of declared list column
    /// `column`.
    private func listPlace(_ realm: Realm, _ column: Int32) -> (table: Table, list: ListDatabases, stored: Int)? {
        if let current = realm.currentBinding(of: self), current !== _binding { _binding = current }
        let binding = _binding.unsafelyUnwrapped
        let stored = binding.isIdentity ? Int(column) : binding.storedColumn(column)
        guard let list = binding.table.list(at: stored) else { return nil }
        return (binding.table, list, stored)
    }

    /// Reads through `body` from the realm's current version, stopping as reads do on failure.
    private func readList<R>(_ column: Int32, _ body: (StoreView, ListDatabases, UnsafeRawBufferPointer) throws -> R) -> R {
        let realm = _realm.unsafelyUnwrapped
        realm.checkThread()
        loadRecord(realm)  // stops if the object is gone
        guard let place = listPlace(realm, column) else {
            fatalError("The list '\(objectSchema.className).\(objectSchema.properties[Int(column)].name)' has no storage in the file")
        }
        do {
            return try _key.withBytes { try body(realm.readView(), place.list, $0) }
        } catch {
            realm.cannotRead("a list of '\(place.table.className)'", error)
        }
    }

    /// The stored bytes of every element of declared list column `column`, in one walk.
    final func _listFields(_ column: Int32) -> [[UInt8]?] {
        readList(column) { view, list, owner in try view.listElements(list, owner: owner) }
    }

    /// The stored bytes of every element of declared list column `column`, in one walk, in
    /// one buffer.
    final func _listFieldBytes(_ column: Int32) -> ListFieldBytes {
        readList(column) { view, list, owner in try view.listFieldBytes(list, owner: owner) }
    }

    final func _listCount(_ column: Int32) -> Int {
        readList(column) { view, list, owner in try view.listCount(list, owner: owner) }
    }

    final func _listElement<Element: _Persistable>(_ column: Int32, at index: Int, as: Element.Type) -> Element {
        let realm = _realm.unsafelyUnwrapped
        let field: [UInt8]?? = readList(column) { view, list, owner in
            try view.withListElement(list, owner: owner, at: index) { $0.map(Array.init) }
        }
        guard let field else {
            fatalError("Index \(index) is out of bounds (must be less than \(_listCount(column))).")
        }
        return Self.decodeElement(field, as: Element.self, in: realm)
    }

    /// An element from its stored bytes: a value, or the object with that key.
    static func decodeElement<Element: _Persistable>(_ field: [UInt8]?, as: Element.Type, in realm: Realm) -> Element {
        guard let field else { return decodeElement(nil as UnsafeRawBufferPointer?, as: Element.self, in: realm) }
        return field.withUnsafeBytes { decodeElement($0, as: Element.self, in: realm) }
    }

    /// An element from its stored bytes, lent: a value, or the object with that key.
    static func decodeElement<Element: _Persistable>(_ field: UnsafeRawBufferPointer?, as: Element.Type, in realm: Realm) -> Element {
        if Element.self == AnyRealmValue.self { return realm.decodeMixed(field) as! Element }
        guard let target = Element.self as? Object.Type else { return Element._rlmDecode(field) }
        guard let field, let object = realm.linkedObject(target, key: field) else {
            fatalError("A list of '\(target.className())' holds an object that is gone")
        }
        // `object` is made by `target`'s own binding, so it is an `Element`: the checked cast
        // (`as!`, a runtime type walk per element) is spared on every element read.
        assert(object is Element)
        return unsafeBitCast(object, to: Element.self)
    }

    /// A stored map value: a value's field bytes, or the key of an object (`nil` when the
    /// entry's object was deleted, or its bytes name none).
    final func _mapValue<Value: _Persistable>(_ bytes: [UInt8]?, as: Value.Type) -> Value {
        if let link = Value.self as? any LinkValue.Type {
            let realm = _realm.unsafelyUnwrapped
            let object = bytes.flatMap { key in key.withUnsafeBytes { realm.linkedObject(link.targetType, key: $0) } }
            return object as! Value
        }
        if Value.self == AnyRealmValue.self {
            let realm = _realm.unsafelyUnwrapped
            return (bytes.map { bytes in bytes.withUnsafeBytes { realm.decodeMixed($0) } } ?? .none) as! Value
        }
        return bytes.map { bytes in bytes.withUnsafeBytes { Value._rlmDecode($0) } } ?? Value._rlmDecode(nil)
    }

    /// Appends `element` to the stored list (adding an unmanaged object first).
    final func _appendToList<Element: _Persistable>(_ column: Int32, _ element: Element) {
        guard let (realm, table, stored) = listWrite(column) else { return }
        guard realm.manage(element) else { return }
        do {
            try element._rlmWithBytes { try realm.session!.appendToList($0, of: _key, in: table, column: stored) }
        } catch {
            realm.recordWriteFailure(error, doing: "Cannot append to a list of '\(table.className)' in")
        }
    }

    /// Applies `edit` to the stored list: the elements stay as stored bytes, and only the ones
    /// the edit brings in are encoded (an unmanaged object is added first).
    final func _editList<Element: _Persistable>(_ column: Int32, _ edit: ListEdit<Element>) {
        guard let (realm, table, stored) = listWrite(column) else { return }
        for element in edit.newElements { guard realm.manage(element) else { return } }
        let list = table.list(at: stored)!
        let old: [[UInt8]?]
        do {
            old = try _key.withBytes { try realm.readView().listElements(list, owner: $0) }
        } catch {
            realm.recordWriteFailure(error, doing: "Cannot read a list of '\(table.className)' in")
            return
        }
        var fields = old
        edit.apply(to: &fields) { $0._rlmWithBytes { $0.map(Array.init) } }
        do {
            try realm.session!.setList(fields, old: old, of: _key, in: table, column: stored)
        } catch {
            realm.recordWriteFailure(error, doing: "Cannot change a list of '\(table.className)' in")
        }
    }

    /// Rewrites the stored elements of list column `column` with `change` (the entries of a
    /// map, which are bytes the caller encodes).
    final func _editListFields(_ column: Int32, _ change: (inout [[UInt8]?]) -> Void) {
        guard let (realm, table, stored) = listWrite(column) else { return }
        let list = table.list(at: stored)!
        do {
            let old = try _key.withBytes { try realm.readView().listElements(list, owner: $0) }
            var fields = old
            change(&fields)
            try realm.session!.setList(fields, old: old, of: _key, in: table, column: stored)
        } catch {
            realm.recordWriteFailure(error, doing: "Cannot change a map of '\(table.className)' in")
        }
    }

    /// Checks that a list of this object may be changed now.
    private func listWrite(_ column: Int32) -> (Realm, Table, Int)? {
        guard let realm = _realm else { fatalError("a key path recorder cannot be written to") }
        realm.checkWriteThread()
        guard realm.writing.failure == nil else { return nil }
        loadRecord(realm)
        guard let place = listPlace(realm, column) else {
            fatalError("The list '\(objectSchema.className).\(objectSchema.properties[Int(column)].name)' has no storage in the file")
        }
        return (realm, place.table, place.stored)
    }
}

extension Realm {
    /// Makes sure `element`, if it is an object, is stored in this file: an unmanaged object is
    /// added. Returns false if that failed (the write's failure is recorded).
    func manage<Element: _Persistable>(_ element: Element) -> Bool {
        if let mixed = element as? AnyRealmValue { return manageMixed(mixed) }
        guard let object = element as? Object else { return true }
        if let owner = object._realm {
            require(owner.file === file, "Cannot add an object managed by a Realm of another file to a list.")
            require(!(object is EmbeddedObject), "Cannot add an existing managed embedded object to a List.")
            return true
        }
        do {
            try addLinked(object)
            return true
        } catch {
            recordWriteFailure(error, doing: "Cannot add an object of '\(type(of: object).className())' to a list in")
            return false
        }
    }
}
