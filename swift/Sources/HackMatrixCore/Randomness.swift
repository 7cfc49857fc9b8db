// Keyed randomness (randomness.md): every random decision is a pure function
// of (seed, site, step, item). There is no generator state to carry around.

/// The draw sites of game-rules.md §15. Two decisions never share a site.
public enum Site: UInt32, Sendable {
    case startCorner = 1
    case startBonus = 2
    case exitCorner = 3
    case blockCount = 4
    case blockCells = 5
    case blockIsData = 6
    case blockIsQuestion = 7
    case blockPoints = 8
    case blockProgramRank = 9
    case resourceAmount = 10
    case resourceKind = 11
    case stageTransmissionCell = 12
    case stageTransmissionType = 13
    case scheduledTransmissionCell = 14
    case scheduledTransmissionType = 15
    case siphonTransmissionCell = 16
    case siphonTransmissionType = 17
    case enemyOrderA = 18
    case enemyOrderB = 19
    case polyType = 20
    case warpTarget = 21
}

public enum KeyedHash {
    /// The 32-bit finaliser of randomness.md, wrapping arithmetic throughout.
    @inline(__always)
    public static func mix32(_ value: UInt32) -> UInt32 {
        var x = value
        x ^= x >> 16
        x = x &* 0x21f0_aaad
        x ^= x >> 15
        x = x &* 0x735a_2d97
        x ^= x >> 15
        return x
    }

    /// `draw(seed, site, step, item)`.
    @inline(__always)
    public static func draw(seed: UInt32, site: UInt32, step: UInt32, item: UInt32) -> UInt32 {
        mix32(mix32(mix32(mix32(seed ^ 0x9E37_79B9) ^ site) ^ step) ^ item)
    }
}

/// The draws available while executing one step (or a reset): the seed and
/// the step index are fixed, the site and item name the decision.
public struct KeyedRandom: Sendable {
    public let seed: UInt32
    public let step: UInt32

    public init(seed: UInt32, step: UInt32) {
        self.seed = seed
        self.step = step
    }

    @inline(__always)
    public func draw(_ site: Site, _ item: Int) -> UInt32 {
        KeyedHash.draw(seed: seed, site: site.rawValue, step: step, item: UInt32(truncatingIfNeeded: item))
    }

    /// Integer in `lo...hi`.
    public func integer(_ site: Site, _ item: Int, in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(draw(site, item) % UInt32(range.count))
    }

    /// Percentage test: true with probability `percent`%.
    public func percent(_ site: Site, _ item: Int, below percent: Int) -> Bool {
        Int(draw(site, item) % 100) < percent
    }

    /// Weighted 45/45/10 choice returning 1, 2 or 3.
    public func weighted454510(_ site: Site, _ item: Int) -> Int {
        let r = Int(draw(site, item) % 100)
        return r < 45 ? 1 : (r < 90 ? 2 : 3)
    }

    /// Index into a list of `count` entries (not cells).
    public func index(_ site: Site, _ item: Int, count: Int) -> Int {
        Int(draw(site, item) % UInt32(count))
    }

    /// `items` sorted ascending by `(draw(site, itemOffset + item), item)`.
    public func keyedOrder(_ site: Site, _ items: [Int], itemOffset: Int = 0) -> [Int] {
        items.map { (key: draw(site, itemOffset + $0), item: $0) }
            .sorted { $0.key != $1.key ? $0.key < $1.key : $0.item < $1.item }
            .map(\.item)
    }

    /// Pick one cell: the candidate with the smallest `(key, cell)`.
    public func pickCell(_ site: Site, from candidates: [Int]) -> Int? {
        keyedOrder(site, candidates).first
    }

    /// Pick `k` distinct cells: the first `k` by `(key, cell)` (all if fewer).
    public func pickCells(_ site: Site, _ k: Int, from candidates: [Int], itemOffset: Int = 0) -> [Int] {
        Array(keyedOrder(site, candidates, itemOffset: itemOffset).prefix(k))
    }
}
