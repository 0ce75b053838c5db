package import Foundation

/// The exact order of decimal numbers stored as text (`Decimal128` and `Decimal` properties),
/// for queries and sorts.
///
/// A decimal's text is read into an *order key*, bytes that compare (`memcmp`) as the numbers
/// do, whatever their number of digits and exponent: no conversion to a type of smaller range
/// (`Decimal`'s exponent stops at ±128, `Double`'s precision at 17 digits) comes between a
/// stored value and the constant it is compared with. The key is the one
/// `Decimal128.appendOrderKey(to:)` makes for the same value, so an index on a decimal property
/// and a scan of it order alike:
///
/// - a class byte: 0 NaN, 1 −Infinity, 2 negative, 3 zero, 4 positive, 5 +Infinity;
/// - for a finite non-zero value, its adjusted exponent (the power of ten of its first
///   significant digit) plus 8192, big-endian in two bytes, then its significant digits in
///   ASCII without trailing zeros, then a zero byte; a negative value's bytes after the class
///   byte inverted.
///
/// `1.50`, `1.5` and `15E-1` have one key; `1E+6000` orders above
/// `9.999999999999999999999999999999999E+6143` and below `1E+6001`.
package enum DecimalOrder {
    /// The class byte of NaN: a key that is this byte alone.
    package static let nanClass: UInt8 = 0

    /// The order key of decimal text `text` (digits with an optional sign, point and exponent,
    /// or NaN / Inf / Infinity, as `Decimal128(string:)` reads them); `nil` if the text is not a
    /// number.
    package static func key(of text: UnsafeRawBufferPointer) -> [UInt8]? {
        [UInt8](unsafeUninitializedCapacity: text.count + 4) { buffer, count in
            count = writeKey(of: text, into: UnsafeMutableRawBufferPointer(buffer)) ?? 0
        }.nonEmpty
    }

    /// The order key of decimal text `text`; `nil` if it is not a number.
    package static func key(of text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { key(of: UnsafeRawBufferPointer($0)) }
    }

    /// Calls `body` with the order key of `text`, made in temporary memory (valid inside
    /// `body` only); text that is not a number gets NaN's key.
    @inline(__always)
    package static func withKey<R>(of text: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeTemporaryAllocation(byteCount: text.count + 4, alignment: 1) { out in
            let count = writeKey(of: text, into: out) ?? {
                out[0] = nanClass
                return 1
            }()
            return body(UnsafeRawBufferPointer(rebasing: out[..<count]))
        }
    }

    /// Negative, zero or positive as decimal text `a` orders before, with or after `b`: NaN
    /// (and text that is not a number) first, equal to itself, as a sort wants it.
    package static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        withKey(of: a) { ka in withKey(of: b) { kb in ByteOrder.compare(ka, kb) } }
    }

    /// Whether an order key is NaN's.
    @inline(__always)
    package static func isNaN(key: UnsafeRawBufferPointer) -> Bool { key.first == nanClass }

    /// Writes the order key of `text` into `out`, which has room for `text.count + 4` bytes,
    /// and returns its length; `nil` if the text is not a number.
    package static func writeKey(of text: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Int? {
        precondition(out.count >= text.count + 4, "an order key needs room for its text and four bytes")
        var start = 0
        var end = text.count
        while start < end && text[start] == 0x20 { start += 1 }
        while end > start && text[end - 1] == 0x20 { end -= 1 }
        var negative = false
        if start < end && (text[start] == UInt8(ascii: "-") || text[start] == UInt8(ascii: "+")) {
            negative = text[start] == UInt8(ascii: "-")
            start += 1
        }
        guard start < end else { return nil }
        let first = text[start]
        if !(first >= 0x30 && first <= 0x39) && first != UInt8(ascii: ".") {
            switch String(decoding: UnsafeRawBufferPointer(rebasing: text[start..<end]), as: UTF8.self).lowercased() {
            case "nan", "snan": out[0] = nanClass
            case "inf", "infinity": out[0] = negative ? 1 : 5
            default: return nil
            }
            return 1
        }
        // The mantissa: digits are counted from the first; significant ones are written from
        // out[3], and the key ends after the last non-zero one.
        var digitsBeforePoint = 0
        var sawPoint = false
        var sawDigit = false
        var firstSignificant = -1  // index, among all digits, of the first non-zero one
        var digitIndex = 0
        var written = 3
        var significantEnd = 3
        var index = start
        while index < end {
            let b = text[index]
            if b >= 0x30 && b <= 0x39 {
                sawDigit = true
                if !sawPoint { digitsBeforePoint += 1 }
                if firstSignificant >= 0 || b != 0x30 {
                    if firstSignificant < 0 { firstSignificant = digitIndex }
                    out[written] = b
                    written += 1
                    if b != 0x30 { significantEnd = written }
                }
                digitIndex += 1
            } else if b == UInt8(ascii: ".") && !sawPoint {
                sawPoint = true
            } else if b == UInt8(ascii: "e") || b == UInt8(ascii: "E") {
                break
            } else {
                return nil
            }
            index += 1
        }
        guard sawDigit else { return nil }
        var exponent = 0
        if index < end {
            var i = index + 1
            var exponentNegative = false
            if i < end && (text[i] == UInt8(ascii: "-") || text[i] == UInt8(ascii: "+")) {
                exponentNegative = text[i] == UInt8(ascii: "-")
                i += 1
            }
            guard i < end else { return nil }
            while i < end {
                let b = text[i]
                guard b >= 0x30 && b <= 0x39, exponent < 1_000_000 else { return nil }
                exponent = exponent * 10 + Int(b - 0x30)
                i += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        if firstSignificant < 0 {
            out[0] = 3
            return 1
        }
        let adjusted = digitsBeforePoint - 1 - firstSignificant + exponent + 8192
        guard adjusted >= 0 && adjusted <= 0xFFFF else { return nil }
        out[1] = UInt8(adjusted >> 8)
        out[2] = UInt8(adjusted & 0xFF)
        out[significantEnd] = 0
        let count = significantEnd + 1
        if negative {
            out[0] = 2
            for i in 1..<count { out[i] = ~out[i] }
        } else {
            out[0] = 4
        }
        return count
    }
}

extension Array {
    fileprivate var nonEmpty: Self? { isEmpty ? nil : self }
}

/// A decimal number exactly as given, with its order key: what a query compares a decimal
/// property with.
package struct ExactDecimal: Hashable, Sendable, CustomStringConvertible {
    /// The number's text (`Decimal128`'s or `Decimal`'s own spelling).
    package let text: String
    /// Its order key (see ``DecimalOrder``).
    package let key: [UInt8]

    /// The number decimal text `text` spells; `nil` if it is not a number.
    package init?(text: String) {
        guard let key = DecimalOrder.key(of: text) else { return nil }
        self.text = text
        self.key = key
    }

    package init(_ value: Decimal128) {
        self.init(spelled: value.stringValue)
    }

    package init(_ value: Decimal) {
        self.init(spelled: value.isNaN ? "NaN" : value.description)
    }

    package init(_ value: Int64) {
        self.init(spelled: String(value))
    }

    /// The shortest decimal that reads back as `value` (as `Decimal128(_: Double)`).
    package init(_ value: Double) {
        self.init(Decimal128(value))
    }

    /// The number stored in field `field` of numeric kind `type` (int, float, double or
    /// decimal); NaN for another kind.
    package init(numberIn field: UnsafeRawBufferPointer, type: PropertyType) {
        switch type {
        case .int: self.init(StoredField.int(field))
        case .float: self.init(Double(StoredField.float(field)))
        case .double: self.init(StoredField.double(field))
        case .decimal: self = ExactDecimal(text: String(decoding: field, as: UTF8.self)) ?? ExactDecimal(Decimal128.nan)
        default: self.init(Decimal128.nan)
        }
    }

    private init(spelled text: String) {
        self.text = text
        key = DecimalOrder.key(of: text) ?? [DecimalOrder.nanClass]
    }

    package var isNaN: Bool { key.first == DecimalOrder.nanClass }

    /// The value as a `Double` (the nearest).
    package var doubleValue: Double { isNaN ? .nan : Double(text.trimmingCharacters(in: .whitespaces)) ?? .nan }

    package static func == (a: ExactDecimal, b: ExactDecimal) -> Bool { a.key == b.key }
    package func hash(into hasher: inout Hasher) { hasher.combine(key) }
    package var description: String { text }
}
