// Scenarios SC-21..SC-23 (game-rules.md §8.1, §8.3, §8.6) and the snapshot bound.
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class EnemyPhaseTests: XCTestCase {
    func testSC21ATransmissionCompletes() {
        let before = scenario(player: pos(0, 0)) {
            $0.player.energy = 1
            $0.own(.wait)
            $0.transmissions = [
                Transmission(position: pos(4, 4), countdown: 1, enemyType: .daemon, fromSiphon: true),
                Transmission(position: pos(2, 5), countdown: 3, enemyType: .glitch),
            ]
        }
        var state = before
        mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.enemies = [Enemy(type: .daemon, position: pos(4, 4), hp: 3, disabled: 0, fromSiphon: true)]
            $0.transmissions = [Transmission(position: pos(2, 5), countdown: 2, enemyType: .glitch)]
        })
        XCTAssertEqual(state.enemies[0].lastKnown, pos(4, 4))
    }

    func testSC22ScheduledTaskFires() {
        let before = scenario(player: pos(0, 0)) {
            $0.turn = 11
            $0.nextTaskTurn = 12
            $0.player.energy = 1
            $0.own(.wait)
            $0.putBlock(dataBlock(3), at: pos(0, 2))
            $0.enemies = [Enemy(type: .daemon, position: pos(3, 0))]
        }
        XCTAssertEqual(KeyedRandom(seed: 0, step: 0).draw(.scheduledTransmissionCell, 25), 0x007a_a7b7)
        var state = before
        mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.enemies[0].position = pos(2, 0)
            $0.transmissions = [Transmission(position: pos(4, 1), countdown: 1, enemyType: .glitch, fromScheduled: true)]
            $0.nextTaskTurn = 24
        })
        XCTAssertEqual(state.turn, 12)
    }

    func testSC23STEPSkipsTheWholeEnemyPhase() {
        let before = scenario(player: pos(0, 0)) {
            $0.player.energy = 3
            $0.own(.step)
            $0.enemies = [Enemy(type: .daemon, position: pos(3, 3), stunned: true)]
            $0.transmissions = [Transmission(position: pos(5, 0), countdown: 1, enemyType: .virus)]
        }
        var state = before
        let stepResult = mustStep(&state, 15)
        let afterStep = expected(after: before, phaseRan: false) {
            $0.player.energy = 0
            $0.stepActive = true
        }
        assertSameState(state, afterStep)
        XCTAssertFalse(stepResult.done)
        mustStep(&state, 3)
        assertSameState(state, expected(after: afterStep, phaseRan: false) {
            $0.player.position = pos(0, 1)
            $0.stepActive = false
        })
        XCTAssertEqual(state.turn, 0)
        XCTAssertEqual(state.transmissions[0].countdown, 1)
        XCTAssertTrue(state.enemies[0].stunned)
        XCTAssertTrue(state.history.isEmpty)
        XCTAssertEqual(state.stepIndex, 2)
    }

    func testSC39CalmFreezesTheSchedule() {
        let before = scenario(player: pos(0, 0)) {
            $0.turn = 11
            $0.player.credits = 2
            $0.player.energy = 5
            $0.own(.calm, .wait)
        }
        var state = before
        mustStep(&state, 20)
        let afterCalm = expected(after: before, phaseRan: false) {
            $0.player.credits = 0
            $0.player.energy = 1
            $0.tasksDisabled = true
        }
        assertSameState(state, afterCalm)
        mustStep(&state, 10)
        assertSameState(state, expected(after: afterCalm, phaseRan: true) { $0.player.energy = 0 })
        XCTAssertEqual(state.turn, 12)
        XCTAssertEqual(state.nextTaskTurn, 12)
        XCTAssertTrue(state.transmissions.isEmpty)
    }

    func testHistoryKeepsAtMostFourSnapshots() {
        var state = scenario(player: pos(0, 0)) {
            $0.player.energy = 6
            $0.own(.wait)
        }
        for _ in 0..<6 { mustStep(&state, 10) }
        XCTAssertEqual(state.history.count, Rules.undoDepth)
        XCTAssertEqual(state.history.map(\.turn), [3, 4, 5, 6])
    }
}
