import Foundation

/// SplitMix64: a small seeded generator, so a failure names a seed that reproduces it.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64

    public init(state: UInt64) {
        self.state = state
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SeededGenerator {
    /// The environment variable that fixes the seed of every test whose data is random.
    public static let seedVariable = "LMDBREALM_TEST_SEED"

    /// The seed of a test whose data is random: the value of `LMDBREALM_TEST_SEED` when it is
    /// set, a new random seed otherwise; printed either way with the test's name, so that a
    /// failed run can be run again on the same data.
    ///
    /// ```swift
    /// let seed = SeededGenerator.testSeed()
    /// var random = SeededGenerator(state: seed)
    /// ```
    ///
    /// - Parameter test: The test's name, for the printed line.
    /// - Returns: The seed to start a ``SeededGenerator`` from.
    /// - Warning: A value of `LMDBREALM_TEST_SEED` that is not an unsigned 64-bit integer stops
    ///   the test process: a seed that is silently replaced would run other data.
    public static func testSeed(_ test: String = #function) -> UInt64 {
        let seed: UInt64
        if let text = ProcessInfo.processInfo.environment[seedVariable] {
            guard let value = UInt64(text) else { preconditionFailure("\(seedVariable)=\(text) is not an unsigned 64-bit integer") }
            seed = value
        } else {
            seed = UInt64.random(in: 0...UInt64.max)
        }
        print("\(test): seed \(seed) (\(seedVariable)=\(seed) runs it on the same data)")
        return seed
    }
}
