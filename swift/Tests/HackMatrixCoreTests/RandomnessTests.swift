import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class RandomnessTests: XCTestCase {
    func testMix32Vectors() {
        XCTAssertEqual(KeyedHash.mix32(0), 0x0000_0000)
        XCTAssertEqual(KeyedHash.mix32(1), 0x86d2_fa73)
        XCTAssertEqual(KeyedHash.mix32(0xFFFF_FFFF), 0x99b5_e683)
    }

    func testDrawVectors() {
        XCTAssertEqual(KeyedHash.draw(seed: 0, site: 0, step: 0, item: 0), 0xef90_ab90)
        XCTAssertEqual(KeyedHash.draw(seed: 0, site: 1, step: 0, item: 0), 0x9b3f_47ae)
        XCTAssertEqual(KeyedHash.draw(seed: 12345, site: 3, step: 7, item: 35), 0x403a_7f9a)
        XCTAssertEqual(KeyedHash.draw(seed: 0xDEAD_BEEF, site: 17, step: 1000, item: 5), 0x0ee9_1f12)
    }

    func testScenarioDrawsQuotedInTheRules() {
        let r = KeyedRandom(seed: 0, step: 0)
        XCTAssertEqual(r.draw(.startCorner, 5), 0x92d9_c4b9)
        XCTAssertEqual(r.draw(.startBonus, 0), 0xa44a_15ac)
        XCTAssertEqual(r.draw(.enemyOrderA, 0), 0x3c76_25de)
        XCTAssertEqual(r.draw(.enemyOrderA, 1), 0x2999_e0f4)
        XCTAssertEqual(r.draw(.warpTarget, 0), 0x1863_b9b0)
        XCTAssertEqual(r.draw(.scheduledTransmissionType, 0), 0xbc03_045a)
    }

    func testDerivedOperations() {
        let r = KeyedRandom(seed: 0, step: 0)
        // integer in range: lo + draw mod (hi - lo + 1)
        XCTAssertEqual(r.integer(.blockCount, 0, in: 5...11), 5 + Int(r.draw(.blockCount, 0) % 7))
        XCTAssertEqual(r.percent(.resourceKind, 3, below: 50), r.draw(.resourceKind, 3) % 100 < 50)
        let w = Int(r.draw(.resourceAmount, 7) % 100)
        XCTAssertEqual(r.weighted454510(.resourceAmount, 7), w < 45 ? 1 : (w < 90 ? 2 : 3))
        XCTAssertEqual(r.index(.polyType, 2, count: 3), Int(r.draw(.polyType, 2) % 3))
        // SC-47: the start corner is the smallest key among the corners.
        XCTAssertEqual(r.pickCell(.startCorner, from: Rules.corners), 30)
        XCTAssertEqual(r.pickCells(.startCorner, 2, from: Rules.corners), [30, 35])
        XCTAssertEqual(r.pickCells(.startCorner, 9, from: Rules.corners), [30, 35, 5, 0])
        XCTAssertNil(r.pickCell(.startCorner, from: []))
    }

    func testItemOffsetKeysButCellTieBreak() {
        let r = KeyedRandom(seed: 77, step: 3)
        let cells = Array(0..<36)
        let order = r.pickCells(.blockCells, 36, from: cells, itemOffset: 72)
        let keys = order.map { r.draw(.blockCells, 72 + $0) }
        XCTAssertEqual(keys, keys.sorted())
        XCTAssertEqual(Set(order), Set(cells))
    }
}
