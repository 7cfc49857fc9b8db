// Scenarios SC-14..SC-20 (game-rules.md §8.4, §8.5): movement routes and order.
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class EnemyMovementTests: XCTestCase {
    private func waiting(_ player: Position, energy: Int = 1, _ configure: (inout GameState) -> Void) -> GameState {
        scenario(player: player) {
            $0.player.energy = energy
            $0.own(.wait)
            configure(&$0)
        }
    }

    func testSC14TieBreakVerticalFirst() {
        let before = waiting(pos(1, 1)) { $0.enemies = [Enemy(type: .daemon, position: pos(3, 3))] }
        var state = before
        mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.enemies[0].position = pos(2, 3)
        })
    }

    func testSC15DetourAroundAnotherEnemyOrderMatters() {
        let before = waiting(pos(0, 0)) {
            $0.enemies = [Enemy(type: .daemon, position: pos(0, 2)), Enemy(type: .daemon, position: pos(0, 3))]
        }
        XCTAssertEqual(KeyedRandom(seed: 0, step: 0).keyedOrder(.enemyOrderA, [0, 1]), [1, 0])
        var state = before
        mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.enemies[0].position = pos(0, 1)
            $0.enemies[1].position = pos(1, 3)
        })
    }

    private func corridor(_ state: inout GameState) {
        for col in 0...4 { state.putBlock(dataBlock(1), at: pos(1, col)) }
    }

    func testSC16GreedyFallbackStepsBackwards() {
        let before = waiting(pos(0, 0)) {
            self.corridor(&$0)
            $0.enemies = [Enemy(type: .daemon, position: pos(0, 2)), Enemy(type: .daemon, position: pos(0, 3))]
        }
        var state = before
        mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.enemies[0].position = pos(0, 1)
            $0.enemies[1].position = pos(0, 4)
        })
    }

    func testSC17Route2AdvancesTowardsABlockingTransmission() {
        let before = waiting(pos(0, 0)) {
            self.corridor(&$0)
            $0.transmissions = [Transmission(position: pos(0, 1), countdown: 3, enemyType: .virus)]
            $0.enemies = [Enemy(type: .daemon, position: pos(0, 3))]
        }
        var state = before
        mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.transmissions[0].countdown = 2
            $0.enemies[0].position = pos(0, 2)
        })
    }

    func testSC18VirusDoubleMoveThenMoveAndAttack() {
        let before = waiting(pos(0, 0), energy: 2) { $0.enemies = [Enemy(type: .virus, position: pos(4, 0))] }
        var state = before
        mustStep(&state, 10)
        let afterFirst = expected(after: before, phaseRan: true) {
            $0.player.energy = 1
            $0.enemies[0].position = pos(2, 0)
        }
        assertSameState(state, afterFirst)
        mustStep(&state, 10)
        assertSameState(state, expected(after: afterFirst, phaseRan: true) {
            $0.player.energy = 0
            $0.enemies[0].position = pos(1, 0)
            $0.player.hp = 2
        })
        XCTAssertEqual(state.turn, 2)
        XCTAssertEqual(state.history.count, 2)
    }

    func testSC19GlitchWalksOntoABlock() {
        let before = waiting(pos(0, 0)) {
            $0.putBlock(dataBlock(2), at: pos(2, 0))
            $0.enemies = [Enemy(type: .glitch, position: pos(3, 0))]
        }
        var state = before
        mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.enemies[0].position = pos(2, 0)
        })
    }

    func testSC19DaemonGoesRound() {
        let before = waiting(pos(0, 0)) {
            $0.putBlock(dataBlock(2), at: pos(2, 0))
            $0.enemies = [Enemy(type: .daemon, position: pos(3, 0))]
        }
        var state = before
        mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.enemies[0].position = pos(3, 1)
        })
    }

    func testSC20CryptogLastKnownPosition() {
        let before = waiting(pos(1, 1)) {
            $0.enemies = [Enemy(type: .cryptog, position: pos(2, 3)), Enemy(type: .cryptog, position: pos(3, 4))]
        }
        var state = before
        mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.enemies[0].position = pos(1, 3)
            $0.enemies[0].lastKnown = pos(1, 3)
            $0.enemies[1].position = pos(2, 4)
        })
        XCTAssertEqual(state.enemies[1].lastKnown, pos(3, 4))
    }

    func testAnEnemyWithNoFreeNeighbourStays() {
        let before = waiting(pos(0, 0)) {
            $0.enemies = [Enemy(type: .daemon, position: pos(5, 5))]
            $0.putBlock(dataBlock(1), at: pos(4, 5))
            $0.transmissions = [Transmission(position: pos(5, 4), countdown: 3, enemyType: .virus)]
        }
        var state = before
        mustStep(&state, 10)
        XCTAssertEqual(state.enemies[0].position, pos(5, 5))
    }
}
