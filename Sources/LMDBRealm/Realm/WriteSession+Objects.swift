import Foundation
import LMDBRealmFormat
import LMDBRealmStorage

// What the write path does with model objects: the storage layer below knows records, keys
// and lists of keys, not `Object`.

extension WriteSession {
    /// Stores the unmanaged `object` of `binding`'s class, with its index entries.
    /// - Returns: The object's key.
    /// - Throws: ``Refusal`` for a primary key that exists (under `.error`) or is too long; the
    ///   file's error otherwise.
    func insert(_ object: Object, binding: TableBinding, update: UpdatePolicy) throws -> ObjectKey {
        let info = binding.classInfo
        let table = binding.table
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        let columns = table.schema.properties.count
        let recordWriter = buffers.recordWriter

        // The record, in stored column order.
        recordWriter.begin(columns: columns)
        if binding.isIdentity {
            for field in info.fields {
                field.accessor.encodeValue(at: base + field.offset, into: recordWriter)
            }
        } else {
            var declared = [Int](repeating: 0, count: columns)
            for d in 0..<columns { declared[binding.storedColumn(Int32(d))] = d }
            for s in 0..<columns {
                let field = info.fields[declared[s]]
                field.accessor.encodeValue(at: base + field.offset, into: recordWriter)
            }
        }

        return try insertBuiltRecord(into: table, update: update)
    }

    /// Stores the list of objects of an object just added, whose list is still empty: what
    /// ``setList(_:old:of:in:column:)`` stores for these elements, each an object's key read
    /// from its accessor (`nil` for one not stored), with no array made per element: the
    /// chunk and its key are built in the write's scratch buffers.
    func setNewList(of objects: [Object], owner: ObjectKey, in table: Table, column: Int) throws {
        guard !objects.isEmpty else { return }
        let list = table.list(at: column)!
        try buffers.withListBuffers { key, chunk in try setNewList(of: objects, owner: owner, in: table, column: column, list: list, key: &key, chunk: &chunk) }
    }

    /// ``setNewList(of:owner:in:column:)`` with the write's scratch buffers, lent as `inout`
    /// parameters: no closure captures them, so no use is checked for exclusive access.
    private func setNewList(
        of objects: [Object], owner: ObjectKey, in table: Table, column: Int, list: ListDatabases, key: inout [UInt8], chunk: inout [UInt8]
    ) throws {
        key.removeAll(keepingCapacity: true)
        owner.withBytes { owner in
            key.append(UInt8(truncatingIfNeeded: owner.count >> 8))
            key.append(UInt8(truncatingIfNeeded: owner.count))
            key.append(contentsOf: owner)
        }
        let prefixCount = key.count
        // A list written after every other (a new object's, in key order) is appended: no
        // search, and full pages. The first refusal ends the attempt.
        var appending = true
        var first = 0
        chunk.removeAll(keepingCapacity: true)
        for position in objects.indices {
            let object = objects[position]
            if object._realm == nil {
                ListChunk.append(nil as UnsafeRawBufferPointer?, to: &chunk)
            } else {
                object._key.withBytes { ListChunk.append($0, to: &chunk) }
            }
            if !chunk.withUnsafeBytes(ListChunk.hasRoom) {
                try storeChunk(&chunk, first: first, key: &key, prefixCount: prefixCount, in: list.items, appending: &appending)
                chunk.removeAll(keepingCapacity: true)
                first = position + 1
            }
        }
        if !chunk.isEmpty { try storeChunk(&chunk, first: first, key: &key, prefixCount: prefixCount, in: list.items, appending: &appending) }
        if let references = list.references {
            // Every target is new to this list. A target held twice is buffered twice; the
            // flush writes it once.
            try owner.withBytes { owner in
                for object in objects where object._realm != nil {
                    try object._key.withBytes { try bufferReference(references, target: $0, owner: owner) }
                }
            }
        }
        listChanged(owner: owner, table: table, column: column)
    }
}

extension ListFieldBytes {
    /// ``withElement(at:_:)`` for the objects of a list of objects: `body` makes the object of
    /// the key it is lent. Not generic, so that the walk is compiled for it.
    func object(at offset: inout Int, _ body: (UnsafeRawBufferPointer?) -> Object) -> Object {
        bytes.withUnsafeBytes { Self.element($0, at: &offset, body) }
    }
}
