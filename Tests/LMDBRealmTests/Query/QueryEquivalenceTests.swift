import Foundation
@_spi(Testing) @testable import LMDBRealm
import TestSupport
import Testing

// Two copies of one model, with and without secondary indexes.
final class Sample: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted(indexed: true) var name: String
    @Persisted var tag: String?
    @Persisted(indexed: true) var n: Int
    @Persisted var m: Int?
    @Persisted var d: Double
    @Persisted(indexed: true) var date: Date
    @Persisted(indexed: true) var flag: Bool
}

final class SampleNoIndex: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name: String
    @Persisted var tag: String?
    @Persisted var n: Int
    @Persisted var m: Int?
    @Persisted var d: Double
    @Persisted var date: Date
    @Persisted var flag: Bool
}

/// A plain Swift copy of one object, for the oracle.
struct SampleValue {
    var id: Int
    var name: String
    var tag: String?
    var n: Int
    var m: Int?
    var d: Double
    var date: Date
    var flag: Bool
}

/// A generated query: its DSL form for each model, and the oracle.
struct GeneratedQuery {
    var text: String
    /// The same query as a predicate string and its arguments.
    var format: String = ""
    var args: [Any] = []
    var sample: (Query<Sample>) -> Query<Bool>
    var plain: (Query<SampleNoIndex>) -> Query<Bool>
    var oracle: (SampleValue) -> Bool
}

/// Builds random queries over a small domain of values, so matches, ties and nils are common.
struct QueryGenerator {
    var rng: SeededGenerator
    static let letters = ["a", "A", "b", "é", "É", "e", "ω", "Ω", "z"]
    static let dates = (0..<12).map { Date(timeIntervalSince1970: 1_600_000_000 + Double($0) * 3600) }

    mutating func word() -> String {
        (0..<Int.random(in: 0...3, using: &rng)).map { _ in Self.letters.randomElement(using: &rng)! }.joined()
    }

    mutating func value(id: Int) -> SampleValue {
        SampleValue(
            id: id, name: word(), tag: Bool.random(using: &rng) ? nil : word(), n: Int.random(in: -5...20, using: &rng),
            m: Bool.random(using: &rng) ? nil : Int.random(in: -5...20, using: &rng),
            d: [Double.nan, -1.5, 0, 0.5, 2, 7.25, .infinity].randomElement(using: &rng)!,
            date: Self.dates.randomElement(using: &rng)!, flag: Bool.random(using: &rng))
    }

    mutating func query(depth: Int) -> GeneratedQuery {
        if depth > 0 && Int.random(in: 0..<3, using: &rng) == 0 {
            let a = query(depth: depth - 1)
            let b = query(depth: depth - 1)
            switch Int.random(in: 0..<3, using: &rng) {
            case 0:
                return GeneratedQuery(text: "(\(a.text) && \(b.text))", format: "(\(a.format) AND \(b.format))", args: a.args + b.args,
                                      sample: { a.sample($0) && b.sample($0) },
                                      plain: { a.plain($0) && b.plain($0) }, oracle: { a.oracle($0) && b.oracle($0) })
            case 1:
                return GeneratedQuery(text: "(\(a.text) || \(b.text))", format: "(\(a.format) || \(b.format))", args: a.args + b.args,
                                      sample: { a.sample($0) || b.sample($0) },
                                      plain: { a.plain($0) || b.plain($0) }, oracle: { a.oracle($0) || b.oracle($0) })
            default:
                return GeneratedQuery(text: "!\(a.text)", format: "NOT (\(a.format))", args: a.args,
                                      sample: { !a.sample($0) }, plain: { !a.plain($0) }, oracle: { !a.oracle($0) })
            }
        }
        return leaf()
    }

    static func modifier(_ options: StringOptions) -> String {
        switch (options.contains(.caseInsensitive), options.contains(.diacriticInsensitive)) {
        case (true, true): "[cd]"
        case (true, false): "[c]"
        case (false, true): "[d]"
        case (false, false): ""
        }
    }

    private mutating func op() -> ComparisonOp { ComparisonOp.allCases.randomElement(using: &rng)! }

    mutating func leaf() -> GeneratedQuery {
        var q = bareLeaf()
        if q.format.isEmpty { (q.format, q.args) = Self.format(q.text, &q) }
        return q
    }

    /// The predicate-string form of a leaf, from its text: the value becomes a `%@` argument.
    static func format(_ text: String, _ q: inout GeneratedQuery) -> (String, [Any]) {
        (q.format, q.args)
    }

    private mutating func bareLeaf() -> GeneratedQuery {
        switch Int.random(in: 0..<11, using: &rng) {
        case 0:
            let v = Int.random(in: -6...21, using: &rng)
            let o = op()
            return GeneratedQuery(text: "n \(o) \(v)", format: "n \(o) %@", args: [v], sample: { o.apply($0.n, v) }, plain: { o.apply($0.n, v) }, oracle: { o.holds($0.n, v) })
        case 1:
            let v = Int.random(in: -6...21, using: &rng)
            let o = op()
            return GeneratedQuery(text: "m \(o) \(v)", format: "m \(o) %@", args: [v], sample: { o.apply($0.m, v) }, plain: { o.apply($0.m, v) },
                                  oracle: { $0.m.map { o.holds($0, v) } ?? (o == .ne) })
        case 2:
            let isNil = Bool.random(using: &rng)
            return GeneratedQuery(text: "tag \(isNil ? "==" : "!=") nil", format: "tag \(isNil ? "==" : "!=") nil",
                                  sample: { isNil ? $0.tag == nil : $0.tag != nil }, plain: { isNil ? $0.tag == nil : $0.tag != nil },
                                  oracle: { ($0.tag == nil) == isNil })
        case 3:
            let v = word()
            let o = op()
            return GeneratedQuery(text: "name \(o) '\(v)'", format: "name \(o) %@", args: [v], sample: { o.apply($0.name, v) }, plain: { o.apply($0.name, v) },
                                  oracle: { o.holdsBytes(Array($0.name.utf8), Array(v.utf8)) })
        case 4:
            let lo = Int.random(in: -6...15, using: &rng)
            let hi = lo + Int.random(in: 0...8, using: &rng)
            return GeneratedQuery(text: "n BETWEEN {\(lo), \(hi)}", format: "n BETWEEN {%@, %@}", args: [lo, hi], sample: { $0.n.contains(lo...hi) }, plain: { $0.n.contains(lo...hi) },
                                  oracle: { (lo...hi).contains($0.n) })
        case 5:
            let values = (0..<Int.random(in: 1...4, using: &rng)).map { _ in word() }
            return GeneratedQuery(text: "name IN \(values)", format: "name IN %@", args: [values], sample: { $0.name.in(values) }, plain: { $0.name.in(values) },
                                  oracle: { values.contains($0.name) })
        case 6:
            let v = word()
            let kind = Int.random(in: 0..<4, using: &rng)
            let options: StringOptions = [[], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]]
                .randomElement(using: &rng)!
            let names = ["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE"]
            let pattern = kind == 3 ? v.replacingOccurrences(of: "a", with: "*").replacingOccurrences(of: "b", with: "?") : v
            func build(_ q: Query<String>) -> Query<Bool> {
                switch kind {
                case 0: return q.starts(with: pattern, options: options)
                case 1: return q.ends(with: pattern, options: options)
                case 2: return q.contains(pattern, options: options)
                default: return q.like(pattern, options: options)
                }
            }
            return GeneratedQuery(
                text: "name \(names[kind])\(options) '\(pattern)'", format: "name \(names[kind])\(Self.modifier(options)) %@", args: [pattern],
                sample: { q in build(q.name) as Query<Bool> }, plain: { q in build(q.name) as Query<Bool> },
                oracle: { Oracle.match(kind, $0.name, pattern, options) })
        case 7:
            let v = QueryGenerator.dates.randomElement(using: &rng)!
            let o = op()
            return GeneratedQuery(text: "date \(o) \(v)", format: "date \(o) %@", args: [v], sample: { o.apply($0.date, v) }, plain: { o.apply($0.date, v) }, oracle: { o.holds($0.date, v) })
        case 8:
            let v = Bool.random(using: &rng)
            return GeneratedQuery(text: "flag == \(v)", format: "flag == %@", args: [v], sample: { $0.flag == v }, plain: { $0.flag == v }, oracle: { $0.flag == v })
        case 9:
            let v = [-1.0, 0, 0.5, 3, .infinity].randomElement(using: &rng)!
            let o = op()
            return GeneratedQuery(text: "d \(o) \(v)", format: "d \(o) %@", args: [v], sample: { o.apply($0.d, v) }, plain: { o.apply($0.d, v) }, oracle: { o.holds($0.d, v) })
        default:
            let v = Int.random(in: 0...400, using: &rng)
            let o = op()
            return GeneratedQuery(text: "id \(o) \(v)", format: "id \(o) %@", args: [v], sample: { o.apply($0.id, v) }, plain: { o.apply($0.id, v) }, oracle: { o.holds($0.id, v) })
        }
    }
}

enum ComparisonOp: String, CaseIterable, CustomStringConvertible {
    case eq = "==", ne = "!=", lt = "<", le = "<=", gt = ">", ge = ">="
    var description: String { rawValue }

    func apply<V: _QueryComparable>(_ q: Query<V>, _ v: V) -> Query<Bool> {
        switch self {
        case .eq: q == v
        case .ne: q != v
        case .lt: q < v
        case .le: q <= v
        case .gt: q > v
        case .ge: q >= v
        }
    }

    func holds<V: Comparable>(_ a: V, _ b: V) -> Bool {
        switch self {
        case .eq: a == b
        case .ne: a != b
        case .lt: a < b
        case .le: a <= b
        case .gt: a > b
        case .ge: a >= b
        }
    }

    func holdsBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        switch self {
        case .eq: a == b
        case .ne: a != b
        case .lt: a.lexicographicallyPrecedes(b)
        case .le: !b.lexicographicallyPrecedes(a)
        case .gt: b.lexicographicallyPrecedes(a)
        case .ge: !a.lexicographicallyPrecedes(b)
        }
    }
}

/// The documented string semantics, written independently of the library.
enum Oracle {
    static func normalize(_ s: String, _ options: StringOptions) -> String {
        var r = s
        if options.contains(.diacriticInsensitive) { r = r.folding(options: .diacriticInsensitive, locale: nil) }
        if options.contains(.caseInsensitive) { r = r.lowercased() }
        return r
    }

    static func match(_ kind: Int, _ text: String, _ pattern: String, _ options: StringOptions) -> Bool {
        let t = Array(normalize(text, options).utf8)
        let p = Array(normalize(pattern, options).utf8)
        switch kind {
        case 0: return t.starts(with: p)
        case 1: return t.reversed().starts(with: p.reversed())
        case 2: return p.isEmpty || (0...max(0, t.count - p.count)).contains { t.count >= p.count && Array(t[$0..<($0 + p.count)]) == p }
        default: return like(Array(normalize(text, options).unicodeScalars)[...], Array(normalize(pattern, options).unicodeScalars)[...])
        }
    }

    /// LIKE by plain recursion.
    static func like(_ t: ArraySlice<Unicode.Scalar>, _ p: ArraySlice<Unicode.Scalar>) -> Bool {
        guard let first = p.first else { return t.isEmpty }
        if first == "*" { return like(t, p.dropFirst()) || (!t.isEmpty && like(t.dropFirst(), p)) }
        guard let c = t.first else { return false }
        return (first == "?" || first == c) && like(t.dropFirst(), p.dropFirst())
    }
}

@Suite struct QueryEquivalenceTests {
    static let objectCount = 3000
    static let queryCount = Int(ProcessInfo.processInfo.environment["EQUIVALENCE_QUERIES"] ?? "") ?? 100

    /// Seconds of synchronous work per seed, so it runs on a thread of its own (see
    /// `onNewThread`) and reports what disagreed.
    @Test(arguments: [UInt64(1), 2, 3])
    func generatedQueriesMatchAPlainSwiftFilter(seed: UInt64) async throws {
        try await withTemporaryDirectory { dir in
            let mismatches = try await onNewThread { try Self.disagreements(seed: seed, in: dir) }
            for mismatch in mismatches {
                Issue.record(Comment(rawValue: mismatch))
            }
        }
    }

    /// Builds the data for `seed` in `dir` and runs its generated queries every way, returning
    /// a line for each result that differs from the plain Swift filter's.
    private static func disagreements(seed: UInt64, in dir: URL) throws -> [String] {
        var mismatches: [String] = []
        func check(_ agrees: Bool, _ message: @autoclosure () -> String) {
            if !agrees { mismatches.append(message()) }
        }
        do {
            var generator = QueryGenerator(rng: SeededGenerator(state: seed))
            let values = (0..<objectCount).map { generator.value(id: $0 * 7 % 401 + $0) }
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Sample.self, SampleNoIndex.self]))
            try realm.write {
                for v in values.shuffled(using: &generator.rng) {
                    let s = Sample()
                    let p = SampleNoIndex()
                    (s.id, s.name, s.tag, s.n, s.m, s.d, s.date, s.flag) = (v.id, v.name, v.tag, v.n, v.m, v.d, v.date, v.flag)
                    (p.id, p.name, p.tag, p.n, p.m, p.d, p.date, p.flag) = (v.id, v.name, v.tag, v.n, v.m, v.d, v.date, v.flag)
                    realm.add(s)
                    realm.add(p)
                }
            }
            let problems = realm.indexProblems()
            check(problems.isEmpty, "seed \(seed): index problems \(problems)")
            let ordered = values.sorted { $0.id < $1.id }
            let indexed = realm.objects(Sample.self)
            let plain = realm.objects(SampleNoIndex.self)
            for _ in 0..<queryCount {
                let q = generator.query(depth: 3)
                let expected = ordered.filter(q.oracle).map(\.id)
                let a = indexed.where(q.sample)
                let b = plain.where(q.plain)
                check(a.map(\.id) == expected, "seed \(seed): \(q.text) [\(a.explain())]")
                check(b.map(\.id) == expected, "seed \(seed): \(q.text)")
                let c = indexed.filter(q.format, argumentArray: q.args)
                let d = plain.filter(q.format, argumentArray: q.args)
                check(c.map(\.id) == expected, "seed \(seed): \(q.format) \(q.args) [\(c.explain())]")
                check(d.map(\.id) == expected, "seed \(seed): \(q.format) \(q.args)")
                check(a.count == expected.count, "seed \(seed): count of \(q.text) [\(a.explain())]")
                check(b.count == expected.count, "seed \(seed): count of \(q.text) without indexes [\(b.explain())]")

                // Sorted by one or two keys, limited: the index-ordered walk and the full sort agree.
                let key = ["n", "name", "date", "flag", "id", "tag", "m", "d"].randomElement(using: &generator.rng)!
                let ascending = Bool.random(using: &generator.rng)
                let limit = Int.random(in: 0...40, using: &generator.rng)
                let sortedExpected = stableSort(ordered.filter(q.oracle), by: key, ascending: ascending).prefix(limit).map(\.id)
                let sa = a.sorted(byKeyPath: key, ascending: ascending).limit(limit)
                let sb = b.sorted(byKeyPath: key, ascending: ascending).limit(limit)
                check(sa.map(\.id) == sortedExpected, "seed \(seed): \(q.text) sorted by \(key) \(ascending) limit \(limit) [\(sa.explain())]")
                check(sb.map(\.id) == sortedExpected, "seed \(seed): \(q.text) sorted by \(key) \(ascending) limit \(limit)")
            }
        }
        return mismatches
    }

    /// A fixed set of `#Predicate`s (the macro cannot be generated at run time), each checked
    /// against `predicate.evaluate` over unmanaged copies, with and without indexes.
    @Test func predicatesMatchTheirOwnEvaluation() throws {
        try withTemporaryDirectory { dir in
            let seed: UInt64 = 99
            var generator = QueryGenerator(rng: SeededGenerator(state: seed))
            let values = (0..<600).map { generator.value(id: $0) }
            let realm = try Realm(configuration: makeConfiguration(dir, types: [Sample.self]))
            var copies: [Sample] = []
            try realm.write {
                for v in values {
                    let s = Sample()
                    (s.id, s.name, s.tag, s.n, s.m, s.d, s.date, s.flag) = (v.id, v.name, v.tag, v.n, v.m, v.d, v.date, v.flag)
                    realm.add(s)
                    let copy = Sample()
                    (copy.id, copy.name, copy.tag, copy.n, copy.m, copy.d, copy.date, copy.flag) = (v.id, v.name, v.tag, v.n, v.m, v.d, v.date, v.flag)
                    copies.append(copy)
                }
            }
            let limit = 7
            let day = QueryGenerator.dates[5]
            let names = ["a", "é", "Ω"]
            let predicates: [Predicate<Sample>] = [
                #Predicate { $0.n > 5 },
                #Predicate { 5 < $0.n && $0.flag },
                #Predicate { $0.n == 3 || $0.name == "a" },
                #Predicate { !($0.n >= limit) },
                #Predicate { $0.tag == nil },
                #Predicate { $0.tag != nil && $0.n <= 2 },
                #Predicate { (2...9).contains($0.n) },
                #Predicate { names.contains($0.name) },
                #Predicate { $0.name.starts(with: "a") },
                #Predicate { $0.name.contains("é") },
                #Predicate { $0.date > day },
                #Predicate { $0.d < 1.0 },
                #Predicate { ($0.m ?? 0) > 10 },
                #Predicate { $0.m == nil || $0.m! > 3 },
                #Predicate { $0.n + 1 > 10 },
                #Predicate { $0.n * 2 == $0.id % 7 },
            ]
            for predicate in predicates {
                let expected = try copies.filter { try predicate.evaluate($0) }.map(\.id).sorted()
                let results = realm.objects(Sample.self).filter(predicate)
                #expect(results.map(\.id) == expected, "seed \(seed): \(QueryNodeDescription.of(predicate)) [\(results.explain())]")
                #expect(results.count == expected.count, "seed \(seed): \(QueryNodeDescription.of(predicate))")
            }
        }
    }

    /// Sorts as documented: stable, nils first ascending, strings by UTF-8 bytes, doubles by
    /// IEEE total order.
    static func stableSort(_ values: [SampleValue], by key: String, ascending: Bool) -> [SampleValue] {
        func cmp(_ a: SampleValue, _ b: SampleValue) -> Int {
            func c<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x > y ? 1 : 0) }
            func opt<T>(_ x: T?, _ y: T?, _ f: (T, T) -> Int) -> Int {
                switch (x, y) {
                case (nil, nil): 0
                case (nil, _): -1
                case (_, nil): 1
                case (let x?, let y?): f(x, y)
                }
            }
            func bytes(_ x: String, _ y: String) -> Int {
                Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8)) ? -1 : (x.utf8.elementsEqual(y.utf8) ? 0 : 1)
            }
            switch key {
            case "n": return c(a.n, b.n)
            case "m": return opt(a.m, b.m, c)
            case "name": return bytes(a.name, b.name)
            case "tag": return opt(a.tag, b.tag, bytes)
            case "date": return c(a.date, b.date)
            case "flag": return c(a.flag ? 1 : 0, b.flag ? 1 : 0)
            case "d":
                func total(_ d: Double) -> UInt64 { d.bitPattern & (1 << 63) != 0 ? ~d.bitPattern : d.bitPattern | (1 << 63) }
                return c(total(a.d), total(b.d))
            default: return c(a.id, b.id)
            }
        }
        return values.enumerated().sorted { x, y in
            let r = cmp(x.element, y.element)
            if r != 0 { return ascending ? r < 0 : r > 0 }
            return x.offset < y.offset
        }.map(\.element)
    }
}

/// The translated form of a predicate, for failure messages.
enum QueryNodeDescription {
    static func of<T: Object>(_ predicate: Predicate<T>) -> String {
        "\(QueryNode(predicate))"
    }
}
