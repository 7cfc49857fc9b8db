// Exit distance (rewards.md §5, game-rules.md §13.2).
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class ExitDistanceTests: XCTestCase {
    func testOpenBoard() {
        let state = scenario(player: pos(0, 0))
        XCTAssertEqual(state.exitDistance(from: pos(0, 0)), 10)
        XCTAssertEqual(state.exitDistance(from: pos(5, 5)), 0)
        XCTAssertEqual(state.exitDistance(from: pos(4, 5)), 1)
    }

    func testBlocksAreWallsButTheStartMayBeABlock() {
        var state = scenario(player: pos(0, 0))
        for col in 0...4 { state.putBlock(dataBlock(1), at: pos(2, col)) }
        XCTAssertEqual(state.exitDistance(from: pos(0, 0)), 10 + 0)  // around through column 5
        XCTAssertEqual(state.exitDistance(from: pos(2, 0)), 8)  // starting on a block
        state.putBlock(dataBlock(1), at: pos(2, 5))
        XCTAssertNil(state.exitDistance(from: pos(0, 0)))
    }

    func testNoPathReadsAsZeroAndLosingThePathPays() {
        // WARP into a walled pocket: before 10, after no path → pays 0.05 · 10.
        var state = scenario(player: pos(0, 0)) {
            $0.player.credits = 2
            $0.player.energy = 2
            $0.player.dataSiphons = 1  // keeps an action available in the pocket (no trap)
            $0.own(.warp)
            for p in [pos(4, 2), pos(2, 2), pos(3, 1), pos(3, 3)] { $0.putBlock(dataBlock(1), at: p) }
            $0.enemies = [Enemy(type: .daemon, position: pos(3, 2))]
        }
        let result = mustStep(&state, 8)
        XCTAssertEqual(state.player.position, pos(3, 2))
        XCTAssertEqual(result.components.values[5], Double(10) * 0.05)
    }

    func testPathLengthsCountStepsAndLeaveUnreachableCellsAtMinusOne() {
        // A wall on row 1, columns 0..4: (0,0) reaches row 2 only around through column 5.
        let wall = Set((0...4).map { pos(1, $0).index })
        let length = pathLengths(from: pos(0, 0)) { !wall.contains($0.index) }
        XCTAssertEqual(length[pos(0, 0).index], 0)
        XCTAssertEqual(length[pos(0, 5).index], 5)
        XCTAssertEqual(length[pos(2, 0).index], 12)
        XCTAssertEqual(length[pos(1, 2).index], -1)
        // The source counts as 0 even when it could not be entered.
        let closed = pathLengths(from: pos(3, 3)) { $0 != pos(3, 3) }
        XCTAssertEqual(closed[pos(3, 3).index], 0)
        XCTAssertEqual(closed[pos(3, 4).index], 1)
    }
}
