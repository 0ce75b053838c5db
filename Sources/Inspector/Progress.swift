import Foundation

/// A progress bar on standard error with the rate and the time left, drawn only when standard
/// error is a terminal (never into a pipe or a log), at most ten times a second.
struct ProgressBar {
    let total: Int
    let unit: String
    private let shown = standardErrorIsTerminal
    private let start = ContinuousClock.now
    private var lastDraw = ContinuousClock.now
    private(set) var done = 0

    init(total: Int, unit: String) {
        self.total = total
        self.unit = unit
    }

    /// Counts `n` more done, redrawing if a tenth of a second has passed.
    mutating func advance(by n: Int = 1) {
        done += n
        guard shown else { return }
        let now = ContinuousClock.now
        if now - lastDraw >= .milliseconds(100) {
            lastDraw = now
            draw(now)
        }
    }

    /// Clears the bar.
    func finish() {
        guard shown else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }

    private func draw(_ now: ContinuousClock.Instant) {
        let elapsed = Double((now - start).components.attoseconds) / 1e18 + Double((now - start).components.seconds)
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 0
        let width = 30
        let filled = Int(fraction * Double(width))
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let left = rate > 0 ? Double(max(0, total - done)) / rate : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let text =
            "\r[\(bar)] \(Int(fraction * 100))% \(done.grouped)/\(total.grouped) \(unit), \(Int(rate).grouped)/s, \(Int(left.rounded())) s left\u{1B}[K"
        FileHandle.standardError.write(Data(text.utf8))
    }
}

extension Int {
    /// The number with thousands separated by commas: 100,000.
    var grouped: String {
        let digits = String(self.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (self < 0 ? "-" : "") + out
    }

    /// A byte count in the unit that suits it: 512 B, 4.0 KiB, 41.2 MiB.
    var bytes: String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(self)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(self) B" : String(format: "%.1f", value) + " " + units[unit]
    }
}
