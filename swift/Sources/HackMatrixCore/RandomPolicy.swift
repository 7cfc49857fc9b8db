// A deterministic random-valid-action policy for benchmarks and tests. The
// rules never use it: the game's own randomness is keyed (randomness.md).

/// Picks uniformly among the allowed actions with a SplitMix64 generator.
public struct RandomPolicy: Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits (SplitMix64).
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly chosen allowed action; nil when the mask allows none.
    public mutating func pick(_ mask: [Bool]) -> Int? {
        let allowed = mask.indices.filter { mask[$0] }
        guard !allowed.isEmpty else { return nil }
        return allowed[Int(next() % UInt64(allowed.count))]
    }
}
