// SC-34 and the snapshot rules of game-rules.md §7.10.
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class UndoTests: XCTestCase {
    func testSC34Undo() {
        var state = scenario(player: pos(2, 2)) {
            $0.player.credits = 6
            $0.player.energy = 1
            $0.own(.wait, .siphPlus, .undo)
            $0.enemies = [Enemy(type: .daemon, position: pos(5, 2)), Enemy(type: .virus, position: pos(0, 5), fromSiphon: true)]
        }
        XCTAssertEqual(KeyedRandom(seed: 0, step: 0).keyedOrder(.enemyOrderA, [0, 1]), [1, 0])
        mustStep(&state, 10)
        XCTAssertEqual(state.player.energy, 0)
        XCTAssertEqual(state.enemies, [
            Enemy(type: .daemon, position: pos(4, 2), lastKnown: pos(5, 2)),
            Enemy(type: .virus, position: pos(2, 5), fromSiphon: true, lastKnown: pos(0, 5)),
        ])
        XCTAssertEqual(state.turn, 1)
        let s1 = state.history.last!
        XCTAssertEqual(s1.player.credits, 6)
        XCTAssertEqual(s1.player.energy, 0)
        XCTAssertEqual(s1.player.dataSiphons, 0)
        XCTAssertEqual(s1.enemies, state.enemies)

        mustStep(&state, 16)
        XCTAssertEqual(state.player.credits, 1)
        XCTAssertEqual(state.player.dataSiphons, 1)
        XCTAssertTrue(state.actionMask()[14])

        let beforeUndo = state
        let result = mustStep(&state, 14)
        var expected = beforeUndo
        expected.player.credits = 6
        expected.player.dataSiphons = 0
        expected.enemies[1].fromSiphon = false
        expected.history = []
        expected.stepIndex = 3
        assertSameState(state, expected)
        XCTAssertFalse(state.actionMask()[14])
        XCTAssertEqual(result.components.values[8], 0.25)  // credits 1 → 6 and DS back: resource_gain
    }

    func testUndoDoesNotRestoreTimingOrStage() {
        var state = scenario(player: pos(2, 2)) {
            $0.player.energy = 1
            $0.player.credits = 1
            $0.player.dataSiphons = 1
            $0.own(.wait, .undo)
            $0.transmissions = [Transmission(position: pos(4, 4), countdown: 3, enemyType: .glitch, fromScheduled: true)]
        }
        mustStep(&state, 10)
        mustStep(&state, 4)  // siphon: interval, nextTaskTurn, pending change; not restored by UNDO
        XCTAssertEqual(state.turn, 2)
        let (interval, next) = (state.interval, state.nextTaskTurn)
        mustStep(&state, 14)
        XCTAssertEqual(state.turn, 2)  // the snapshot of the siphon's own phase
        XCTAssertEqual(state.interval, interval)
        XCTAssertEqual(state.nextTaskTurn, next)
        XCTAssertEqual(state.player.credits, 1)  // refunded: the snapshot holds the credit
        XCTAssertFalse(state.transmissions[0].fromScheduled)
        XCTAssertEqual(state.history.count, 1)
    }
}
