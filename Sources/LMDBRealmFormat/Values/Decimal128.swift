public import Foundation

/// A 128-bit IEEE 754-2008 decimal floating-point number: up to 34 significant digits and an
/// exponent from -6176 to 6111, with NaN and infinities.
///
/// ```swift
/// final class Invoice: Object {
///     @Persisted var total: Decimal128 = 0
/// }
/// let price: Decimal128 = "19.99"
/// invoice.total = price * 3                 // 59.97, exactly
/// realm.objects(Invoice.self).where { $0.total > 50 }
/// let sum: Decimal128 = invoices.sum(ofProperty: "total")
/// ```
///
/// Arithmetic rounds to 34 significant digits, half to even, as decimal128 does; a result too
/// large for the exponent range is an infinity. Values compare by their numeric value
/// (`1.50 == 1.5`); NaN equals nothing, not even itself.
///
/// Stored in the file as its decimal text, so a `Decimal128` property and a `Decimal` property
/// read each other's values; queries and sorts compare the values within `Decimal`'s range
/// (38 digits, exponents -128...127).
public struct Decimal128: Sendable {
    package enum Kind: Sendable { case finite, infinity, nan }

    package let kind: Kind
    let isNegative: Bool
    /// Below 10^34.
    let coefficient: UInt128
    package let exponent: Int

    static let maxDigits = 34
    static let maxCoefficient: UInt128 = power(34) - 1
    static let minExponent = -6176
    static let maxExponent = 6111

    package init(kind: Kind, negative: Bool, coefficient: UInt128 = 0, exponent: Int = 0) {
        self.kind = kind
        self.isNegative = negative
        self.coefficient = coefficient
        self.exponent = exponent
    }

    /// Zero.
    public init() {
        self.init(kind: .finite, negative: false)
    }

    /// The finite value `coefficient` × 10^`exponent`, rounded to 34 digits (half to even).
    package init(negative: Bool, coefficient: UInt128, exponent: Int, roundDigit: UInt128 = 0, sticky: Bool = false) {
        var c = coefficient
        var e = exponent
        var round = roundDigit
        var sticky = sticky
        while c > Self.maxCoefficient || e < Self.minExponent {
            if c == 0 && e < Self.minExponent {
                e = Self.minExponent
                break
            }
            sticky = sticky || round != 0
            round = c % 10
            c /= 10
            e += 1
        }
        if round > 5 || (round == 5 && (sticky || c % 2 == 1)) {
            c += 1
            if c > Self.maxCoefficient {
                c /= 10
                e += 1
            }
        }
        // A small coefficient with a large exponent moves digits into the coefficient.
        while e > Self.maxExponent && c != 0 && c * 10 <= Self.maxCoefficient {
            c *= 10
            e -= 1
        }
        if e > Self.maxExponent {
            if c == 0 {
                e = Self.maxExponent
            } else {
                self.init(kind: .infinity, negative: negative)
                return
            }
        }
        self.init(kind: .finite, negative: negative, coefficient: c, exponent: e)
    }

    /// 10^0 through 10^38, the powers UInt128 holds.
    static let powersOfTen: [UInt128] = {
        var powers: [UInt128] = [1]
        for _ in 0..<38 { powers.append(powers.last! * 10) }
        return powers
    }()

    @inline(__always)
    package static func power(_ n: Int) -> UInt128 { powersOfTen[n] }

    package static func digits(_ value: UInt128) -> Int {
        var n = 1
        var v = value
        while v >= 10 {
            v /= 10
            n += 1
        }
        return n
    }

    /// Not a number.
    public static let nan = Decimal128(kind: .nan, negative: false)
    /// Positive infinity.
    public static let infinity = Decimal128(kind: .infinity, negative: false)
    /// The largest finite value: 34 nines × 10^6111.
    public static var max: Decimal128 { Decimal128(kind: .finite, negative: false, coefficient: maxCoefficient, exponent: maxExponent) }
    /// The smallest finite value: -(34 nines × 10^6111).
    public static var min: Decimal128 { Decimal128(kind: .finite, negative: true, coefficient: maxCoefficient, exponent: maxExponent) }

    /// Whether the value is NaN.
    public var isNaN: Bool { kind == .nan }
    /// Whether the value is a signalling NaN (every NaN of this type is reported as one, as
    /// RealmSwift does).
    public var isSignaling: Bool { isNaN }
    /// As ``isSignaling``.
    public var isSignalingNaN: Bool { isSignaling }
    /// Whether the value is an infinity.
    public var isInfinite: Bool { kind == .infinity }
    /// Whether the value is zero (of either sign).
    public var isZero: Bool { kind == .finite && coefficient == 0 }

    /// The absolute value.
    public var magnitude: Decimal128 { Decimal128(kind: kind, negative: false, coefficient: coefficient, exponent: exponent) }
}

// MARK: - Conversions

extension Decimal128 {
    /// Parses `string`: digits with an optional sign, decimal point and exponent (`"-1.25E+3"`),
    /// or `NaN`, `Inf`, `Infinity`.
    /// - Throws: ``Decimal128/ParseError`` naming the text, if it is not a number or has more
    ///   than 34 significant digits (it could not be represented exactly).
    public init(string: String) throws {
        guard let value = Decimal128.parse(string) else { throw ParseError(text: string) }
        self = value
    }

    /// Why a string is not a ``Decimal128``.
    public struct ParseError: Error, CustomStringConvertible, Sendable {
        /// The text that was not parsed.
        public let text: String
        public var description: String {
            "'\(text)' is not a Decimal128: expected digits with an optional sign, point and exponent, at most 34 significant digits, or NaN / Infinity"
        }
    }

    package static func parse(_ text: String) -> Decimal128? {
        var text = text
        return text.withUTF8 { parse(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Parses decimal text from `bytes` (see ``init(string:)``); `nil` if it is not a number that
    /// 34 digits hold exactly.
    package static func parse(bytes: UnsafeRawBufferPointer) -> Decimal128? {
        var start = 0
        var end = bytes.count
        while start < end && bytes[start] == 0x20 { start += 1 }
        while end > start && bytes[end - 1] == 0x20 { end -= 1 }
        var negative = false
        if start < end && (bytes[start] == UInt8(ascii: "-") || bytes[start] == UInt8(ascii: "+")) {
            negative = bytes[start] == UInt8(ascii: "-")
            start += 1
        }
        guard start < end else { return nil }
        let first = bytes[start]
        if !(first >= 0x30 && first <= 0x39) && first != UInt8(ascii: ".") {
            let word = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self).lowercased()
            if word == "nan" || word == "snan" { return Decimal128(kind: .nan, negative: negative) }
            if word == "inf" || word == "infinity" { return Decimal128(kind: .infinity, negative: negative) }
            return nil
        }
        var coefficient: UInt128 = 0
        // Up to 19 digits gather in a UInt64 first: cheaper than UInt128 arithmetic.
        var small: UInt64 = 0
        var smallDigits = 0
        var digits = 0
        var exponent = 0
        var sawDigit = false
        var sawPoint = false
        var index = start
        func flush() {
            if smallDigits > 0 {
                coefficient = coefficient == 0 ? UInt128(small) : coefficient * power(smallDigits) + UInt128(small)
                small = 0
                smallDigits = 0
            }
        }
        while index < end {
            let b = bytes[index]
            if b >= 0x30 && b <= 0x39 {
                sawDigit = true
                if sawPoint { exponent -= 1 }
                if digits > 0 || b != 0x30 {
                    digits += 1
                    if digits > maxDigits {
                        // Beyond 34 digits only zeros can go, into the exponent: before the
                        // point a zero scales the value; after it, it undoes the step above.
                        guard b == 0x30 else { return nil }
                        exponent += 1
                        digits -= 1
                        index += 1
                        continue
                    }
                    small = small &* 10 &+ UInt64(b - 0x30)
                    smallDigits += 1
                    if smallDigits == 19 { flush() }
                }
            } else if b == UInt8(ascii: ".") && !sawPoint {
                sawPoint = true
            } else if b == UInt8(ascii: "e") || b == UInt8(ascii: "E") {
                break
            } else {
                return nil
            }
            index += 1
        }
        flush()
        guard sawDigit else { return nil }
        if index < end {
            var i = index + 1
            var exponentNegative = false
            if i < end && (bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+")) {
                exponentNegative = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            guard i < end else { return nil }
            var e = 0
            while i < end {
                let b = bytes[i]
                guard b >= 0x30 && b <= 0x39, e < 1_000_000 else { return nil }
                e = e * 10 + Int(b - 0x30)
                i += 1
            }
            exponent += exponentNegative ? -e : e
        }
        if exponent >= minExponent && exponent <= maxExponent {
            return Decimal128(kind: .finite, negative: negative, coefficient: coefficient, exponent: exponent)
        }
        let value = Decimal128(negative: negative, coefficient: coefficient, exponent: exponent)
        // Exactly representable only (a large exponent with a short coefficient is: `1E+6140`
        // is 1000000000E+6131): the value's order key is the text's.
        guard value.kind == .finite else { return nil }
        if coefficient == 0 { return value }
        var key: [UInt8] = []
        value.appendOrderKey(to: &key)
        guard DecimalOrder.key(of: bytes) == key else { return nil }
        return value
    }

    /// The value `value` holds: an integer of any size, a `Float`, a `Double`, a `String`, an
    /// `NSNumber`, a `Decimal` or a `Decimal128`.
    /// - Precondition: `value` is one of those (a string that parses).
    public init(value: Any) {
        switch value {
        case let v as Decimal128: self = v
        case let v as Decimal: self.init(v)
        case let v as String:
            guard let parsed = Decimal128.parse(v) else { fatalError("'\(v)' is not a valid Decimal128") }
            self = parsed
        case let v as Double: self.init(v)
        case let v as Float: self.init(Double(v))
        case let v as any BinaryInteger: self.init(v)
        case let v as NSNumber: self.init(number: v)
        default: fatalError("Cannot convert a value of type \(type(of: value)) to Decimal128")
        }
    }

    /// The number `number` holds.
    public init(number: NSNumber) {
        let type = String(cString: number.objCType)
        if type == "d" || type == "f" {
            self.init(number.doubleValue)
        } else {
            self.init(number.int64Value)
        }
    }

    /// The integer `value`, rounded to 34 digits if it has more.
    public init<T: BinaryInteger>(_ value: T) {
        let magnitude = UInt128(value.magnitude)
        self.init(negative: value < 0, coefficient: magnitude, exponent: 0)
    }

    /// The integer `source`, or `nil` if it has more than 34 significant digits.
    public init?<T: BinaryInteger>(exactly source: T) {
        let value = Decimal128(source)
        guard value.kind == .finite, value.exponent == 0 else { return nil }
        self = value
    }

    /// The shortest decimal that reads back as `value` (`0.1` for `0.1`, not the binary
    /// fraction's 55 digits).
    public init(_ value: Double) {
        if value.isNaN {
            self = .nan
        } else if value.isInfinite {
            self.init(kind: .infinity, negative: value < 0)
        } else {
            self = Decimal128.parse("\(value)") ?? .nan
        }
    }

    /// The `Decimal` `value`, exactly when it has at most 34 digits.
    public init(_ value: Decimal) {
        if value.isNaN {
            self = .nan
        } else {
            self = Decimal128.parseRounding(value.description)
        }
    }

    /// Parses a number that may have more than 34 digits, rounding it.
    static func parseRounding(_ text: String) -> Decimal128 {
        if let exact = parse(text) { return exact }
        // Too many digits: drop the excess, rounding, by parsing as a wider integer string.
        var digits = ""
        var exponent = 0
        var negative = false
        var sawPoint = false
        for ch in text {
            if ch == "-" { negative = true } else if ch == "." { sawPoint = true } else if ch.isNumber {
                digits.append(ch)
                if sawPoint { exponent -= 1 }
            }
        }
        let trimmed = digits.drop { $0 == "0" }
        let keep = trimmed.prefix(maxDigits + 1)
        let dropped = trimmed.count - keep.count
        let sticky = trimmed.dropFirst(keep.count).contains { $0 != "0" }
        var c: UInt128 = 0
        for ch in keep { c = c * 10 + UInt128(ch.wholeNumberValue!) }
        let round = c % 10
        return Decimal128(negative: negative, coefficient: c / 10, exponent: exponent + dropped + 1, roundDigit: round, sticky: sticky)
    }

    /// The value as text: plain digits (`"-12.50"`) when the exponent is small, scientific
    /// notation (`"1.5E+40"`) otherwise, as IEEE 754's to-scientific-string gives it.
    public var stringValue: String {
        switch kind {
        case .nan: return "NaN"
        case .infinity: return isNegative ? "-Inf" : "+Inf"
        case .finite: break
        }
        let sign = isNegative ? "-" : ""
        let text = String(coefficient)
        let adjusted = exponent + text.count - 1
        if exponent <= 0 && adjusted >= -6 {
            if exponent == 0 { return sign + text }
            let point = text.count + exponent
            if point > 0 {
                return sign + text.prefix(point) + "." + text.dropFirst(point)
            }
            return sign + "0." + String(repeating: "0", count: -point) + text
        }
        let mantissa = text.count > 1 ? text.prefix(1) + "." + text.dropFirst() : Substring(text)
        return sign + mantissa + "E" + (adjusted >= 0 ? "+" : "") + String(adjusted)
    }

    /// The nearest `Double`.
    public var doubleValue: Double {
        switch kind {
        case .nan: return .nan
        case .infinity: return isNegative ? -.infinity : .infinity
        case .finite: return Double(stringValue) ?? .nan
        }
    }

    /// The value as a `Decimal`; NaN if it is outside `Decimal`'s range.
    public var decimalValue: Decimal {
        guard kind == .finite else { return .nan }
        return Decimal(string: stringValue, locale: Locale(identifier: "en_US_POSIX")) ?? .nan
    }
}

extension Decimal128: CustomStringConvertible {
    public var description: String { stringValue }
}

extension Decimal128: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self.init(value) }
}

extension Decimal128: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self.init(value) }
}

extension Decimal128: ExpressibleByStringLiteral {
    /// Stops the process if the literal is not a number.
    public init(stringLiteral value: String) {
        guard let parsed = Decimal128.parse(value) else { fatalError("'\(value)' is not a valid Decimal128") }
        self = parsed
    }
}

extension Decimal128: Codable {
    /// Decodes a string (`"12.50"`), an integer or a double.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard let value = Decimal128.parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: ParseError(text: text).description)
            }
            self = value
        } else if let int = try? container.decode(Int64.self) {
            self.init(int)
        } else if let double = try? container.decode(Double.self) {
            self.init(double)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Cannot convert value to Decimal128")
        }
    }

    /// Encodes the value as its text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}

// MARK: - Comparison

extension Decimal128: Comparable, Hashable {
    /// Compares finite values `a` and `b` by value: -1, 0 or 1.
    private static func compareFinite(_ a: Decimal128, _ b: Decimal128) -> Int {
        if a.coefficient == 0 && b.coefficient == 0 { return 0 }
        if a.coefficient == 0 { return b.isNegative ? 1 : -1 }
        if b.coefficient == 0 { return a.isNegative ? -1 : 1 }
        if a.isNegative != b.isNegative { return a.isNegative ? -1 : 1 }
        let magnitude = compareMagnitude(a, b)
        return a.isNegative ? -magnitude : magnitude
    }

    /// Compares the magnitudes of finite non-zero values.
    private static func compareMagnitude(_ a: Decimal128, _ b: Decimal128) -> Int {
        let adjustedA = a.exponent + digits(a.coefficient)
        let adjustedB = b.exponent + digits(b.coefficient)
        if adjustedA != adjustedB { return adjustedA < adjustedB ? -1 : 1 }
        // Same number of digits before the point: align the coefficients (within 34 digits).
        var ca = a.coefficient
        var cb = b.coefficient
        if a.exponent > b.exponent { ca *= power(a.exponent - b.exponent) } else if b.exponent > a.exponent { cb *= power(b.exponent - a.exponent) }
        return ca == cb ? 0 : (ca < cb ? -1 : 1)
    }

    public static func == (lhs: Decimal128, rhs: Decimal128) -> Bool {
        switch (lhs.kind, rhs.kind) {
        case (.finite, .finite): return compareFinite(lhs, rhs) == 0
        case (.infinity, .infinity): return lhs.isNegative == rhs.isNegative
        default: return false
        }
    }

    /// NaN is neither less nor greater than anything.
    public static func < (lhs: Decimal128, rhs: Decimal128) -> Bool {
        switch (lhs.kind, rhs.kind) {
        case (.nan, _), (_, .nan): return false
        case (.finite, .finite): return compareFinite(lhs, rhs) < 0
        case (.infinity, .infinity): return lhs.isNegative && !rhs.isNegative
        case (.infinity, .finite): return lhs.isNegative
        case (.finite, .infinity): return !rhs.isNegative
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch kind {
        case .nan: hasher.combine(2)
        case .infinity: hasher.combine(isNegative ? 3 : 4)
        case .finite:
            // Equal values hash alike: trailing zeros and the sign of zero do not count.
            var c = coefficient
            var e = exponent
            if c == 0 {
                hasher.combine(0)
                return
            }
            while c % 10 == 0 {
                c /= 10
                e += 1
            }
            hasher.combine(isNegative)
            hasher.combine(c)
            hasher.combine(e)
        }
    }
}

// MARK: - Arithmetic

extension Decimal128: SignedNumeric, Strideable {
    public typealias Magnitude = Decimal128
    public typealias Stride = Decimal128

    public static prefix func - (operand: Decimal128) -> Decimal128 {
        Decimal128(kind: operand.kind, negative: !operand.isNegative, coefficient: operand.coefficient, exponent: operand.exponent)
    }

    public mutating func negate() { self = -self }

    public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        switch (lhs.kind, rhs.kind) {
        case (.nan, _), (_, .nan): return .nan
        case (.infinity, .infinity): return lhs.isNegative == rhs.isNegative ? lhs : .nan
        case (.infinity, _): return lhs
        case (_, .infinity): return rhs
        case (.finite, .finite): break
        }
        if lhs.coefficient == 0 && rhs.coefficient == 0 {
            return Decimal128(negative: lhs.isNegative && rhs.isNegative, coefficient: 0, exponent: Swift.min(lhs.exponent, rhs.exponent))
        }
        if lhs.coefficient == 0 { return rhs }
        if rhs.coefficient == 0 { return lhs }
        if lhs.exponent == rhs.exponent && lhs.isNegative == rhs.isNegative {
            // The usual sum of amounts with the same number of decimals.
            let sum = lhs.coefficient + rhs.coefficient
            if sum <= maxCoefficient { return Decimal128(kind: .finite, negative: lhs.isNegative, coefficient: sum, exponent: lhs.exponent) }
        }
        // `big` has the larger exponent; its coefficient is scaled to `small`'s exponent.
        let (big, small) = lhs.exponent >= rhs.exponent ? (lhs, rhs) : (rhs, lhs)
        let gap = big.exponent - small.exponent
        // UInt128 holds 38 digits: scale `big` up as far as that allows.
        let room = 38 - digits(big.coefficient)
        var bigCoefficient = big.coefficient
        var smallCoefficient = small.coefficient
        var exponent = small.exponent
        var round: UInt128 = 0
        var sticky = false
        if gap <= room {
            bigCoefficient *= power(gap)
        } else {
            bigCoefficient *= power(room)
            exponent = big.exponent - room
            // `small` loses its digits below the new exponent (kept for rounding).
            let shift = exponent - small.exponent
            if shift > 38 {
                sticky = true
                smallCoefficient = 0
            } else {
                for i in 0..<shift {
                    if i == shift - 1 { round = smallCoefficient % 10 } else { sticky = sticky || smallCoefficient % 10 != 0 }
                    smallCoefficient /= 10
                }
            }
        }
        let negative: Bool
        var coefficient: UInt128
        if big.isNegative == small.isNegative {
            negative = big.isNegative
            coefficient = bigCoefficient + smallCoefficient
        } else if bigCoefficient >= smallCoefficient {
            negative = big.isNegative
            coefficient = bigCoefficient - smallCoefficient
            if round != 0 || sticky {
                // Subtracting a fraction below the last kept digit: borrow one.
                coefficient -= 1
                round = 10 - round - (sticky ? 1 : 0)
                if round == 10 { round = 0 }
            }
        } else {
            negative = small.isNegative
            coefficient = smallCoefficient - bigCoefficient
        }
        if coefficient == 0 && round == 0 && !sticky { return Decimal128(negative: false, coefficient: 0, exponent: exponent) }
        return Decimal128(negative: negative, coefficient: coefficient, exponent: exponent, roundDigit: round, sticky: sticky)
    }

    public static func - (lhs: Decimal128, rhs: Decimal128) -> Decimal128 { lhs + -rhs }

    public static func * (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        let negative = lhs.isNegative != rhs.isNegative
        switch (lhs.kind, rhs.kind) {
        case (.nan, _), (_, .nan): return .nan
        case (.infinity, _), (_, .infinity):
            return lhs.isZero || rhs.isZero ? .nan : Decimal128(kind: .infinity, negative: negative)
        case (.finite, .finite): break
        }
        var (high, low) = lhs.coefficient.multipliedFullWidth(by: rhs.coefficient)
        var exponent = lhs.exponent + rhs.exponent
        var round: UInt128 = 0
        var sticky = false
        // Down to 128 bits, keeping the dropped digits for rounding.
        while high != 0 {
            sticky = sticky || round != 0
            let (qHigh, rHigh) = high.quotientAndRemainder(dividingBy: 10)
            let (qLow, rLow) = UInt128(10).dividingFullWidth((rHigh, low))
            high = qHigh
            low = qLow
            round = rLow
            exponent += 1
        }
        return Decimal128(negative: negative, coefficient: low, exponent: exponent, roundDigit: round, sticky: sticky)
    }

    /// Division by zero gives an infinity (NaN for zero by zero).
    public static func / (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        let negative = lhs.isNegative != rhs.isNegative
        switch (lhs.kind, rhs.kind) {
        case (.nan, _), (_, .nan), (.infinity, .infinity): return .nan
        case (.infinity, _): return Decimal128(kind: .infinity, negative: negative)
        case (_, .infinity): return Decimal128(negative: negative, coefficient: 0, exponent: 0)
        case (.finite, .finite): break
        }
        if rhs.coefficient == 0 { return lhs.coefficient == 0 ? .nan : Decimal128(kind: .infinity, negative: negative) }
        if lhs.coefficient == 0 { return Decimal128(negative: negative, coefficient: 0, exponent: lhs.exponent - rhs.exponent) }
        // Scale the dividend so that the quotient has 35 digits or more (one for rounding).
        let scale = Swift.max(0, maxDigits + 1 + digits(rhs.coefficient) - digits(lhs.coefficient))
        var high: UInt128 = 0
        var low = lhs.coefficient
        for _ in 0..<scale {
            let (h1, l1) = low.multipliedFullWidth(by: 10)
            high = high * 10 + h1
            low = l1
        }
        let (qHigh, rHigh) = high.quotientAndRemainder(dividingBy: rhs.coefficient)
        let (q, remainder) = rhs.coefficient.dividingFullWidth((rHigh, low))
        var quotient = q
        var exponent = lhs.exponent - rhs.exponent - scale
        precondition(qHigh == 0, "Decimal128 division overflowed its working width")
        var round: UInt128 = 0
        var sticky = remainder != 0
        while quotient > maxCoefficient {
            sticky = sticky || round != 0
            round = quotient % 10
            quotient /= 10
            exponent += 1
        }
        // Prefer the exact quotient's own exponent: strip zeros the scaling added.
        if !sticky && round == 0 {
            let ideal = lhs.exponent - rhs.exponent
            while exponent < ideal && quotient % 10 == 0 && quotient != 0 {
                quotient /= 10
                exponent += 1
            }
        }
        return Decimal128(negative: negative, coefficient: quotient, exponent: exponent, roundDigit: round, sticky: sticky)
    }

    public static func += (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs + rhs }
    public static func -= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs - rhs }
    public static func *= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs * rhs }
    public static func /= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs / rhs }

    public func distance(to other: Decimal128) -> Decimal128 { other - self }
    public func advanced(by n: Decimal128) -> Decimal128 { self + n }
}

extension Decimal128 {
    /// Appends bytes whose order (`memcmp`) is the values' order and which are equal for equal
    /// values: a class byte (NaN, -Inf, negative, zero, positive, +Inf), then for a finite
    /// non-zero value its adjusted exponent (biased, big-endian) and the digits of its
    /// coefficient without trailing zeros, ended by a zero byte; a negative value's bytes after
    /// the class byte inverted.
    func appendOrderKey(to out: inout [UInt8]) {
        switch kind {
        case .nan: return out.append(0)
        case .infinity: return out.append(isNegative ? 1 : 5)
        case .finite: break
        }
        if coefficient == 0 { return out.append(3) }
        var c = coefficient
        var e = exponent
        while c % 10 == 0 {
            c /= 10
            e += 1
        }
        let text = Array(String(c).utf8)
        let adjusted = UInt16(e + text.count - 1 + 8192)
        var body: [UInt8] = [UInt8(adjusted >> 8), UInt8(adjusted & 0xFF)]
        body.append(contentsOf: text)
        body.append(0)
        if isNegative {
            out.append(2)
            out.append(contentsOf: body.map { ~$0 })
        } else {
            out.append(4)
            out.append(contentsOf: body)
        }
    }
}
