// Scenarios SC-08..SC-11 (stage completion, victory, death) and rejection (§3.3).
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class StepTests: XCTestCase {
    func testSC08StageCompletionAndStage2Generation() {
        var state = scenario(player: pos(5, 4)) {
            $0.stepIndex = 5
            $0.turn = 7
            $0.interval = 9
            $0.nextTaskTurn = 20
            $0.showActivated = true
            $0.tasksDisabled = true
            $0.atkPlusUses = 2
            $0.player.hp = 2
            $0.player.credits = 3
            $0.enemies = [Enemy(type: .daemon, position: pos(2, 2), stunned: true)]
            $0.transmissions = [Transmission(position: pos(3, 3), countdown: 2, enemyType: .virus)]
            $0.history = [$0.makeSnapshot()]
        }
        let random = KeyedRandom(seed: 0, step: 5)
        XCTAssertEqual([0, 5, 30].map { random.draw(.exitCorner, $0) }, [0xd898_afaa, 0xaa94_7d19, 0xc387_9c18])
        XCTAssertEqual(random.draw(.blockCount, 0), 0x45ce_cc56)
        XCTAssertEqual(random.draw(.stageTransmissionType, 0), 0xd3b4_08d7)
        XCTAssertEqual(random.draw(.stageTransmissionType, 1), 0x422b_9ce6)
        let result = mustStep(&state, 3)
        let board = parseBoard("""
            S+e1 c1 D9/9 e2 e2 @c1
            c2 c2 D6/6 c1 D7/7 c2
            D4/4 c3 P:D_BOM/4 c1 c1 e1
            c2 c1 c2 Q:REDUC/3 e1 P:RESET/2
            e1 e2 c1 P:HACK/4 e1 c2
            S+e1 P:ROW/2 e1 c1 e1 X
            """)
        XCTAssertEqual(board.player, pos(5, 5))
        XCTAssertEqual(state.player.position, pos(5, 5))
        XCTAssertEqual(state.player.hp, 3)
        XCTAssertEqual(state.player.credits, 3)
        XCTAssertEqual(state.stage, 2)
        XCTAssertEqual(state.interval, 11)
        XCTAssertEqual(state.turn, 0)
        XCTAssertEqual(state.nextTaskTurn, 11)
        XCTAssertFalse(state.showActivated)
        XCTAssertFalse(state.tasksDisabled)
        XCTAssertFalse(state.stepActive)
        XCTAssertEqual(state.atkPlusUses, 0)
        XCTAssertTrue(state.history.isEmpty)
        XCTAssertEqual(state.exit, pos(0, 5))
        XCTAssertEqual(state.cells.filter(\.isBlock).count, 9)
        assertCells(state.cells, board.cells)
        XCTAssertEqual(state.enemies, [Enemy(type: .daemon, position: pos(2, 2), stunned: true)])
        XCTAssertEqual(state.transmissions, [
            Transmission(position: pos(3, 3), countdown: 2, enemyType: .virus),
            Transmission(position: pos(1, 4), countdown: 1, enemyType: .cryptog),
            Transmission(position: pos(3, 1), countdown: 1, enemyType: .glitch),
        ])
        XCTAssertEqual(state.stepIndex, 6)
        XCTAssertEqual(state.outcome, .running)
        XCTAssertTrue(result.events.exitReached)
        XCTAssertFalse(result.events.gameWon)
    }

    func testSC09Victory() {
        let before = scenario(player: pos(4, 5)) {
            $0.stage = 8
            $0.stepIndex = 40
            $0.player.hp = 1
            $0.player.score = 20
            $0.enemies = [Enemy(type: .virus, position: pos(3, 3))]
        }
        var state = before
        let result = mustStep(&state, 0)
        assertSameState(state, expected(after: before, phaseRan: false) {
            $0.player.position = pos(5, 5)
            $0.player.hp = 2
            $0.outcome = .won
        })
        XCTAssertEqual(state.stage, 8)
        XCTAssertEqual(state.turn, 0)
        XCTAssertTrue(result.events.exitReached && result.events.gameWon && result.done)
        XCTAssertEqual(state.actionMask(), [Bool](repeating: false, count: 28))
        XCTAssertThrowsError(try state.step(0)) { XCTAssertEqual($0 as? StepError, .episodeOver) }
    }

    func testSC10Death() {
        let before = scenario(player: pos(3, 3)) {
            $0.player.hp = 1
            $0.player.energy = 1
            $0.own(.wait)
            $0.enemies = [Enemy(type: .virus, position: pos(4, 3))]
        }
        var state = before
        let result = mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.player.hp = 0
            $0.outcome = .died
        })
        XCTAssertTrue(result.events.playerDied)
        XCTAssertFalse(result.events.diedToSiphonEnemy)
        XCTAssertEqual(state.enemies[0].position, pos(4, 3))
    }

    func testSC11TwoAttackersDeathToASiphonEnemy() {
        let before = scenario(player: pos(3, 3)) {
            $0.player.hp = 2
            $0.player.energy = 1
            $0.own(.wait)
            $0.enemies = [Enemy(type: .daemon, position: pos(2, 3)),
                          Enemy(type: .virus, position: pos(5, 3), fromSiphon: true)]
        }
        var state = before
        let result = mustStep(&state, 10)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.player.energy = 0
            $0.player.hp = 0
            $0.enemies[1].position = pos(4, 3)
            $0.outcome = .died
        })
        XCTAssertTrue(result.events.playerDied)
        XCTAssertTrue(result.events.diedToSiphonEnemy)
    }

    func testRejectedActionsChangeNothing() {
        let before = scenario(player: pos(0, 0))
        var state = before
        XCTAssertThrowsError(try state.step(1)) { XCTAssertEqual($0 as? StepError, .actionMasked(1)) }
        XCTAssertThrowsError(try state.step(28)) { XCTAssertEqual($0 as? StepError, .actionOutOfRange(28)) }
        XCTAssertThrowsError(try state.step(-1)) { XCTAssertEqual($0 as? StepError, .actionOutOfRange(-1)) }
        XCTAssertThrowsError(try state.step(4)) { XCTAssertEqual($0 as? StepError, .actionMasked(4)) }
        XCTAssertEqual(state, before)
        state.outcome = .died
        XCTAssertThrowsError(try state.step(99)) { XCTAssertEqual($0 as? StepError, .episodeOver) }
    }

    func testTrappedPlayerDies() {
        // WARP onto a glitch on a block ringed by blocks: no direction, no siphon, no program left.
        var state = scenario(player: pos(0, 0)) {
            $0.player.credits = 2
            $0.player.energy = 2
            $0.own(.warp)
            for p in [pos(3, 3), pos(4, 3), pos(2, 3), pos(3, 2), pos(3, 4)] { $0.putBlock(dataBlock(1), at: p) }
            $0.enemies = [Enemy(type: .glitch, position: pos(3, 3))]
        }
        let result = mustStep(&state, 8)
        XCTAssertEqual(state.player.position, pos(3, 3))
        XCTAssertEqual(state.outcome, .died)
        XCTAssertEqual(state.player.hp, 0)
        XCTAssertTrue(result.events.playerDied)
        XCTAssertEqual(result.components.values[10], -3.0)  // damage_penalty counts the hp lost
    }

    func testStepIndexWraps() {
        var state = scenario(player: pos(2, 2)) { $0.stepIndex = UInt32.max }
        mustStep(&state, 0)
        XCTAssertEqual(state.stepIndex, 0)
    }
}
