import CHotPaths

/// The file's own values — a stored schema in the catalog, the schema and catalog versions, a
/// class's Swift type name — as stored: the value's bytes, the CRC-32C of the key followed by
/// the value (UInt32 little-endian), and the byte ``marker``.
///
/// These values are read at open and when the catalog changes, so they are always checked:
/// a flipped bit in a schema or a schema version would otherwise be read as another schema or
/// another version. A value written before checksums (it does not end with the marker, which
/// no JSON text, UTF-8 name or 8-byte version stored then ends with) is still read as it is.
package enum SealedValue {
    /// The last byte of a sealed value: a UTF-8 lead byte, which never ends text.
    package static let marker: UInt8 = 0xC5
    /// The bytes a sealed value has after its value.
    package static let trailerSize = 5

    /// `value` sealed for storage under `key`.
    package static func sealed(_ value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) -> [UInt8] {
        var out = Array(value)
        let checksum = lmdbrealm_crc32c(lmdbrealm_crc32c(0, key.baseAddress, key.count), value.baseAddress, value.count)
        withUnsafeBytes(of: checksum.littleEndian) { out.append(contentsOf: $0) }
        out.append(marker)
        return out
    }

    /// `value` sealed for storage under `key`.
    package static func sealed(_ value: [UInt8], key: [UInt8]) -> [UInt8] {
        value.withUnsafeBytes { v in key.withUnsafeBytes { sealed(v, key: $0) } }
    }

    /// The value of the stored bytes `stored` under `key`: `.success` with the value's bytes
    /// (lying in `stored`), or `.failure` saying what is wrong with its checksum.
    package static func open(_ stored: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) -> Result<UnsafeRawBufferPointer, Damage> {
        guard stored.count >= trailerSize, stored[stored.count - 1] == marker else { return .success(stored) }
        let value = UnsafeRawBufferPointer(rebasing: stored[..<(stored.count - trailerSize)])
        let kept = UInt32(littleEndian: stored.loadUnaligned(fromByteOffset: value.count, as: UInt32.self))
        let computed = lmdbrealm_crc32c(lmdbrealm_crc32c(0, key.baseAddress, key.count), value.baseAddress, value.count)
        guard kept == computed else {
            return .failure(Damage(description: "its checksum is \(String(kept, radix: 16)), its key's and bytes' \(String(computed, radix: 16))"))
        }
        return .success(value)
    }

    /// What is wrong with a sealed value.
    package struct Damage: Error, CustomStringConvertible {
        package let description: String
    }
}
