import Foundation
import GRDBSQLite
import LMDBRealm

// The decimal workload: the sum of a money amount over 100,000 objects. LMDBRealm stores a
// `Decimal128` and sums with `sum(ofProperty:)`, exactly; SQLite has no decimal type, and the
// exact way a SQLite user keeps money is integer cents, summed with SUM(). Both give the same
// total (checked). Run with `--decimal`.
//
//     swift run -c release --package-path Benchmarks LMDBRealmBenchmarks --decimal [--n N] [--rounds R]

final class Payment: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var amount: Decimal128
}

/// The amount of payment `i`, in cents: up to 10,000.00.
func paymentCents(_ i: Int) -> Int64 { Int64((i &* 7919) % 1_000_000) + 1 }

@MainActor func runDecimalSum(settings: Settings) throws {
    let n = settings.n
    let rounds = settings.effectiveRounds
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("lmdbrealm-decimal-\(getpid())")
    defer { try? FileManager.default.removeItem(at: root) }
    log("decimal: N = \(n) payments; \(rounds) rounds")
    var rates: [String: [Double]] = [:]
    let expected = (0..<n).reduce(Int64(0)) { $0 + paymentCents($1) }
    for round in 0..<rounds {
        let directory = root.appendingPathComponent("\(round)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        var config = Realm.Configuration(fileURL: directory.appendingPathComponent("payments.realm"), objectTypes: [Payment.self])
        config.maximumFileSize = profileMapSize
        let realm = try Realm(configuration: config)
        try realm.write {
            for i in 0..<n {
                let payment = Payment()
                payment.id = Int64(i)
                payment.amount = Decimal128(paymentCents(i)) / 100
                realm.add(payment)
            }
        }
        let payments = realm.objects(Payment.self)
        let (realmSeconds, total) = timedQuery { () -> Int in
            let sum: Decimal128 = payments.sum(ofProperty: "amount")
            return sum == Decimal128(expected) / 100 ? 1 : 0
        }
        precondition(total == 1, "LMDBRealm's decimal sum is not \(Decimal128(expected) / 100)")

        let db = try SQLiteDatabase(
            directory.appendingPathComponent("payments.sqlite"),
            schema: "CREATE TABLE payment(id INTEGER PRIMARY KEY, amount_cents INTEGER NOT NULL);")
        let insert = try db.prepare("INSERT INTO payment(id, amount_cents) VALUES (?, ?)")
        try db.exec("BEGIN")
        for i in 0..<n {
            sqlite3_bind_int64(insert, 1, Int64(i))
            sqlite3_bind_int64(insert, 2, paymentCents(i))
            guard sqlite3_step(insert) == SQLITE_DONE else { throw db.lastError }
            sqlite3_reset(insert)
        }
        try db.exec("COMMIT")
        sqlite3_finalize(insert)
        let sum = try db.prepare("SELECT SUM(amount_cents) FROM payment")
        defer { sqlite3_finalize(sum) }
        let (sqliteSeconds, cents) = timedQuery { () -> Int in
            guard sqlite3_step(sum) == SQLITE_ROW else { return -1 }
            let value = Int(sqlite3_column_int64(sum, 0))
            sqlite3_reset(sum)
            return value
        }
        precondition(Int64(cents) == expected, "SQLite's sum is \(cents), not \(expected)")
        rates["LMDBRealm", default: []].append(1 / realmSeconds)
        rates["SQLite", default: []].append(1 / sqliteSeconds)
        log("round \(round + 1)/\(rounds): LMDBRealm \(String(format: "%.1f", realmSeconds * 1000)) ms, SQLite \(String(format: "%.1f", sqliteSeconds * 1000)) ms")
        try? FileManager.default.removeItem(at: directory)
    }
    func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }
    let (a, b) = (median(rates["LMDBRealm"]!), median(rates["SQLite"]!))
    let table = """
        Decimal, N = \(n) payments; medians of \(rounds) rounds

        | operation | unit | LMDBRealm | SQLite | LMDBRealm / SQLite | what |
        |---|---|---:|---:|---:|---|
        | decimal_sum | sums/s | \(Report.format(a)) | \(Report.format(b)) | \(String(format: "%.2f", a / b))× | the exact total of \(n) money amounts: LMDBRealm `sum(ofProperty:)` of a `Decimal128`; SQLite SUM() of integer cents (it has no decimal type) |

        """
    print(table)
    if let output = settings.output {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try table.write(toFile: output + "/decimal-latest.md", atomically: true, encoding: .utf8)
    }
}
