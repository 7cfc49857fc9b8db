// Scenarios SC-01, SC-03..SC-07 (game-rules.md §16): moves and the line of fire.
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class DirectionalTests: XCTestCase {
    func testSC01PlainMove() {
        let before = scenario(player: pos(2, 2))
        var state = before
        let result = mustStep(&state, 0)
        assertSameState(state, expected(after: before, phaseRan: true) { $0.player.position = pos(3, 2) })
        XCTAssertEqual(state.turn, 1)
        XCTAssertEqual(state.history.count, 1)
        XCTAssertEqual(state.stepIndex, 1)
        XCTAssertFalse(result.done)
    }

    func testSC03AttackAtRangeStunCoversThePhase() {
        let before = scenario(player: pos(0, 3)) { $0.enemies = [Enemy(type: .virus, position: pos(4, 3))] }
        var state = before
        let result = mustStep(&state, 0)
        assertSameState(state, expected(after: before, phaseRan: true) { $0.enemies[0].hp = 1 })
        XCTAssertFalse(state.enemies[0].stunned)
        XCTAssertEqual(result.events.enemiesKilled, 0)
    }

    func testSC04BlockStopsTheLineThenVirusPathsAround() {
        let before = scenario(player: pos(0, 3)) {
            $0.putBlock(dataBlock(5), at: pos(2, 3))
            $0.enemies = [Enemy(type: .virus, position: pos(4, 3))]
        }
        var state = before
        mustStep(&state, 0)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.position = pos(1, 3)
            $0.enemies[0].position = pos(3, 2)
        })
    }

    func testSC05TransmissionHitBeforeEnemyFurtherAlong() {
        let before = scenario(player: pos(1, 1)) {
            $0.transmissions = [Transmission(position: pos(1, 3), countdown: 2, enemyType: .daemon)]
            $0.enemies = [Enemy(type: .daemon, position: pos(1, 5))]
        }
        var state = before
        let result = mustStep(&state, 3)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.transmissions = []
            $0.enemies[0].position = pos(1, 4)
        })
        XCTAssertEqual(result.events.transmissionsKilled, 1)
    }

    func testSC06KillingAnEnemyOnABlock() {
        let before = scenario(player: pos(0, 3)) {
            $0.player.attack = 2
            $0.putBlock(dataBlock(5), at: pos(2, 3))
            $0.enemies = [Enemy(type: .glitch, position: pos(2, 3))]
        }
        var state = before
        let result = mustStep(&state, 0)
        assertSameState(state, expected(after: before, phaseRan: true) { $0.enemies = [] })
        XCTAssertEqual(result.events.enemiesKilled, 1)
        XCTAssertTrue(state.isBlock(pos(2, 3)))
    }

    func testSC07WalkingCollectsADataSiphonButNotCredits() {
        let before = scenario(player: pos(0, 1)) {
            $0.cells[0].content = .dataSiphon
            $0.cells[0].credits = 2
        }
        var state = before
        let result = mustStep(&state, 2)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.position = pos(0, 0)
            $0.player.dataSiphons = 1
            $0.cells[0].content = .empty
        })
        XCTAssertEqual(state.cells[0].credits, 2)
        XCTAssertEqual(state.player.credits, 0)
        XCTAssertTrue(result.events.dataSiphonCollected)
    }

    func testAScheduledTargetCountsNoKill() {
        let before = scenario(player: pos(0, 0)) {
            $0.transmissions = [Transmission(position: pos(0, 4), countdown: 2, enemyType: .virus, fromScheduled: true)]
        }
        var state = before
        let result = mustStep(&state, 3)
        XCTAssertEqual(result.events.transmissionsKilled, 0)
        XCTAssertTrue(state.transmissions.isEmpty)
    }
}
