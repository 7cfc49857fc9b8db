// Program scenarios SC-24..SC-46 (game-rules.md §7), except UNDO (UndoTests)
// and CALM (EnemyPhaseTests). None of them ends the turn.
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class ProgramsTests: XCTestCase {
    /// Runs one program step from `before` and compares with the expected changes (no enemy phase).
    @discardableResult
    private func check(
        _ before: GameState, _ action: Int, file: StaticString = #filePath, line: UInt = #line,
        _ change: (inout GameState) -> Void
    ) -> (GameState, StepResult) {
        var state = before
        let result = mustStep(&state, action, file: file, line: line)
        assertSameState(state, expected(after: before, phaseRan: false, change), file: file, line: line)
        return (state, result)
    }

    func testSC24PushClaimsCancellationsCascade() {
        let before = scenario(player: pos(2, 2)) {
            $0.player.energy = 2
            $0.own(.push)
            $0.enemies = [
                Enemy(type: .daemon, position: pos(3, 2)), Enemy(type: .virus, position: pos(1, 4)),
                Enemy(type: .glitch, position: pos(1, 5)), Enemy(type: .daemon, position: pos(5, 5)),
                Enemy(type: .cryptog, position: pos(4, 4)), Enemy(type: .virus, position: pos(3, 3)),
                Enemy(type: .daemon, position: pos(2, 1)),
            ]
            $0.transmissions = [Transmission(position: pos(2, 0), countdown: 2, enemyType: .virus)]
        }
        check(before, 5) {
            $0.player.energy = 0
            $0.enemies[0].position = pos(4, 2)
            $0.enemies[1].position = pos(0, 5)
        }
    }

    func testSC25Pull() {
        let before = scenario(player: pos(2, 2)) {
            $0.player.energy = 2
            $0.own(.pull)
            $0.enemies = [
                Enemy(type: .daemon, position: pos(4, 4)), Enemy(type: .virus, position: pos(3, 3)),
                Enemy(type: .glitch, position: pos(2, 5)), Enemy(type: .daemon, position: pos(2, 1)),
                Enemy(type: .virus, position: pos(0, 2)),
            ]
        }
        check(before, 6) {
            $0.player.energy = 0
            $0.enemies[0].position = pos(3, 3)
            $0.enemies[1].position = pos(2, 3)
            $0.enemies[2].position = pos(2, 4)
            $0.enemies[4].position = pos(1, 2)
        }
    }

    func testSC26Crash() {
        let before = scenario(player: pos(2, 2)) {
            $0.player.credits = 3
            $0.player.energy = 2
            $0.own(.crash)
            $0.putBlock(dataBlock(2), at: pos(3, 1))
            $0.cells[pos(3, 1).index].energy = 2
            $0.putBlock(programBlock(.row, spawn: 0), at: pos(3, 2), siphoned: true)
            $0.cells[pos(1, 1).index].credits = 1
            $0.enemies = [
                Enemy(type: .virus, position: pos(3, 3)), Enemy(type: .glitch, position: pos(1, 3), fromScheduled: true),
                Enemy(type: .virus, position: pos(4, 2)),
            ]
            $0.transmissions = [Transmission(position: pos(2, 1), countdown: 2, enemyType: .daemon)]
        }
        let (_, result) = check(before, 7) {
            $0.player.credits = 0
            $0.player.energy = 0
            $0.cells[pos(3, 1).index].content = .empty
            $0.cells[pos(3, 1).index].block = nil
            $0.cells[pos(3, 2).index].content = .empty
            $0.cells[pos(3, 2).index].block = nil
            $0.enemies = [Enemy(type: .virus, position: pos(4, 2))]
            $0.transmissions = []
        }
        XCTAssertEqual(result.events.enemiesKilled, 1)
        XCTAssertEqual(result.events.transmissionsKilled, 1)
    }

    func testSC27WarpToALoneTransmissionOnADataSiphon() {
        let before = scenario(player: pos(0, 0)) {
            $0.player.credits = 2
            $0.player.energy = 2
            $0.own(.warp)
            $0.cells[pos(3, 3).index].content = .dataSiphon
            $0.transmissions = [Transmission(position: pos(3, 3), countdown: 2, enemyType: .virus)]
        }
        let (_, result) = check(before, 8) {
            $0.player.credits = 0
            $0.player.energy = 0
            $0.player.position = pos(3, 3)
            $0.transmissions = []
        }
        XCTAssertEqual(result.events.transmissionsKilled, 1)
    }

    func testSC28WarpWithARandomTarget() {
        let before = scenario(player: pos(0, 0)) {
            $0.player.credits = 2
            $0.player.energy = 2
            $0.own(.warp)
            $0.enemies = [Enemy(type: .daemon, position: pos(1, 1)), Enemy(type: .virus, position: pos(4, 4))]
            $0.transmissions = [Transmission(position: pos(2, 5), countdown: 1, enemyType: .glitch)]
        }
        let (_, result) = check(before, 8) {
            $0.player.credits = 0
            $0.player.energy = 0
            $0.player.position = pos(4, 4)
            $0.enemies = [Enemy(type: .daemon, position: pos(1, 1))]
        }
        XCTAssertEqual(result.events.enemiesKilled, 1)
    }

    func testSC29WarpOntoTheExitCompletesTheStage() {
        var state = scenario(player: pos(0, 0)) {
            $0.stepIndex = 3
            $0.player.hp = 1
            $0.player.credits = 2
            $0.player.energy = 2
            $0.own(.warp)
            $0.enemies = [Enemy(type: .virus, position: pos(5, 5))]
        }
        let result = mustStep(&state, 8)
        XCTAssertEqual(state.player.position, pos(5, 5))
        XCTAssertTrue(state.enemies.isEmpty)
        XCTAssertEqual(result.events.enemiesKilled, 1)
        XCTAssertTrue(result.events.exitReached)
        XCTAssertEqual(state.player.hp, 2)
        XCTAssertEqual(state.player.credits, 0)
        XCTAssertEqual(state.player.energy, 0)
        XCTAssertEqual(state.stage, 2)
        XCTAssertEqual(state.interval, 11)
        XCTAssertEqual(state.nextTaskTurn, 11)
        XCTAssertEqual(state.turn, 0)
        XCTAssertTrue(state.history.isEmpty)
        XCTAssertEqual(state.exit, pos(0, 0))
        XCTAssertEqual(state.cells[0].content, .exit)
        XCTAssertEqual(state.cells.indices.filter { state.cells[$0].content == .dataSiphon }, [5, 30])
        XCTAssertEqual(state.cells.filter(\.isBlock).count, 7)
        // The first attempt (a = 0) is the valid one: its seven cells are the board's blocks.
        let random = KeyedRandom(seed: 0, step: 3)
        let allowed = (0..<36).filter { !Rules.corners.contains($0) }
        let attempt0 = random.pickCells(.blockCells, 7, from: allowed, itemOffset: 0).sorted()
        XCTAssertEqual(state.cells.indices.filter { state.cells[$0].isBlock }, attempt0)
        XCTAssertEqual(state.transmissions, [
            Transmission(position: pos(0, 1), countdown: 1, enemyType: .daemon),
            Transmission(position: pos(4, 2), countdown: 1, enemyType: .cryptog),
        ])
        XCTAssertEqual(state.stepIndex, 4)
    }

    func testSC30Poly() {
        let before = scenario(player: pos(3, 3)) {
            $0.player.credits = 1
            $0.player.energy = 1
            $0.own(.poly)
            $0.enemies = [
                Enemy(type: .daemon, position: pos(0, 4), hp: 1), Enemy(type: .virus, position: pos(3, 0), hp: 2),
                Enemy(type: .cryptog, position: pos(4, 4), hp: 1),
                Enemy(type: .glitch, position: pos(1, 2), hp: 2, stunned: true),
            ]
        }
        let (_, result) = check(before, 9) {
            $0.player.credits = 0
            $0.player.energy = 0
            $0.enemies = [
                Enemy(type: .daemon, position: pos(3, 0), hp: 3), Enemy(type: .daemon, position: pos(4, 4), hp: 2),
                Enemy(type: .cryptog, position: pos(1, 2), hp: 2, stunned: true, lastKnown: pos(1, 2)),
            ]
        }
        XCTAssertEqual(result.events.enemiesKilled, 1)
    }

    func testSC31Debug() {
        let before = scenario(player: pos(2, 2)) {
            $0.player.credits = 3
            $0.own(.debug)
            $0.putBlock(dataBlock(5), at: pos(4, 4))
            $0.putBlock(dataBlock(2), at: pos(1, 0))
            $0.enemies = [Enemy(type: .glitch, position: pos(4, 4)), Enemy(type: .daemon, position: pos(1, 0)),
                          Enemy(type: .virus, position: pos(5, 3))]
        }
        check(before, 11) {
            $0.player.credits = 0
            $0.enemies[0].hp = 1
            $0.enemies[0].stunned = true
            $0.enemies[1].hp = 2
            $0.enemies[1].stunned = true
        }
    }

    func testSC32Row() {
        let before = scenario(player: pos(3, 3)) {
            $0.player.credits = 3
            $0.player.energy = 1
            $0.own(.row)
            $0.putBlock(dataBlock(1), at: pos(3, 4))
            $0.enemies = [Enemy(type: .virus, position: pos(3, 0), hp: 1), Enemy(type: .daemon, position: pos(3, 5)),
                          Enemy(type: .virus, position: pos(4, 3))]
        }
        let (_, result) = check(before, 12) {
            $0.player.credits = 0
            $0.player.energy = 0
            $0.enemies = [Enemy(type: .daemon, position: pos(3, 5), hp: 2, stunned: true),
                          Enemy(type: .virus, position: pos(4, 3))]
        }
        XCTAssertEqual(result.events.enemiesKilled, 1)
    }

    func testSC33ColWithAttack2() {
        let before = scenario(player: pos(3, 3)) {
            $0.player.credits = 3
            $0.player.energy = 1
            $0.player.attack = 2
            $0.own(.col)
            $0.enemies = [Enemy(type: .daemon, position: pos(0, 3)), Enemy(type: .virus, position: pos(5, 3)),
                          Enemy(type: .glitch, position: pos(3, 4))]
        }
        let (_, result) = check(before, 13) {
            $0.player.credits = 0
            $0.player.energy = 0
            $0.enemies = [Enemy(type: .daemon, position: pos(0, 3), hp: 1, stunned: true),
                          Enemy(type: .glitch, position: pos(3, 4))]
        }
        XCTAssertEqual(result.events.enemiesKilled, 1)
    }

    func testSC35SiphPlus() {
        let before = scenario(player: pos(3, 3)) {
            $0.player.credits = 5
            $0.own(.siphPlus)
            $0.enemies = [Enemy(type: .daemon, position: pos(5, 4))]
        }
        check(before, 16) {
            $0.player.credits = 0
            $0.player.dataSiphons = 1
        }
    }

    func testSC36Exch() {
        let before = scenario(player: pos(3, 3)) {
            $0.player.credits = 8
            $0.own(.exch)
        }
        check(before, 17) {
            $0.player.credits = 4
            $0.player.energy = 4
        }
    }

    func testSC37Show() {
        let before = scenario(player: pos(3, 3)) {
            $0.player.credits = 2
            $0.own(.show)
            $0.enemies = [Enemy(type: .cryptog, position: pos(5, 5))]
        }
        XCTAssertNil(before.visibleEnemyIndex(at: pos(5, 5)))
        let (state, _) = check(before, 18) {
            $0.player.credits = 0
            $0.showActivated = true
        }
        XCTAssertFalse(state.actionMask()[18])
        XCTAssertEqual(state.visibleEnemyIndex(at: pos(5, 5)), 0)
        XCTAssertEqual(ObservationEncoder.encodeFlat(state)[33 + 42 * 35 + 3], 1)
    }

    func testSC38Reset() {
        let before = scenario(player: pos(3, 3)) {
            $0.player.hp = 1
            $0.player.energy = 4
            $0.own(.reset)
        }
        let (state, result) = check(before, 19) {
            $0.player.hp = 3
            $0.player.energy = 0
        }
        XCTAssertFalse(result.events.resetAtTwo)
        XCTAssertFalse(state.actionMask()[19])
        var atTwo = before
        atTwo.player.hp = 2
        XCTAssertTrue(mustStep(&atTwo, 19).events.resetAtTwo)
    }

    func testSC40DaemonBomb() {
        let before = scenario(player: pos(2, 2)) {
            $0.player.credits = 3
            $0.player.attack = 3
            $0.own(.dBom)
            $0.enemies = [
                Enemy(type: .daemon, position: pos(4, 2)), Enemy(type: .daemon, position: pos(2, 4)),
                Enemy(type: .virus, position: pos(5, 3), hp: 2), Enemy(type: .glitch, position: pos(3, 1), hp: 1),
                Enemy(type: .daemon, position: pos(4, 3)),
            ]
        }
        let (_, result) = check(before, 21) {
            $0.player.credits = 0
            $0.enemies = [
                Enemy(type: .daemon, position: pos(2, 4), hp: 3),
                Enemy(type: .virus, position: pos(5, 3), hp: 1, stunned: true),
                Enemy(type: .daemon, position: pos(4, 3), hp: 2, stunned: true),
            ]
        }
        XCTAssertEqual(result.events.enemiesKilled, 2)
    }

    func testSC41Delay() {
        let before = scenario(player: pos(0, 0)) {
            $0.player.credits = 1
            $0.player.energy = 2
            $0.own(.delay)
            $0.transmissions = [Transmission(position: pos(3, 3), countdown: 1, enemyType: .virus),
                                Transmission(position: pos(4, 1), countdown: 2, enemyType: .daemon)]
        }
        check(before, 22) {
            $0.player.credits = 0
            $0.player.energy = 0
            $0.transmissions[0].countdown = 4
            $0.transmissions[1].countdown = 5
        }
    }

    func testSC42AntiV() {
        let before = scenario(player: pos(3, 3)) {
            $0.player.credits = 3
            $0.player.attack = 3
            $0.own(.antiV)
            $0.enemies = [Enemy(type: .virus, position: pos(4, 3), hp: 1), Enemy(type: .virus, position: pos(5, 5), hp: 2),
                          Enemy(type: .daemon, position: pos(0, 0))]
        }
        let (_, result) = check(before, 23) {
            $0.player.credits = 0
            $0.enemies = [Enemy(type: .virus, position: pos(5, 5), hp: 1, stunned: true),
                          Enemy(type: .daemon, position: pos(0, 0))]
        }
        XCTAssertEqual(result.events.enemiesKilled, 1)
    }

    func testSC43Score() {
        let before = scenario(player: pos(3, 3)) {
            $0.stage = 2
            $0.player.energy = 5
            $0.player.score = 7
            $0.own(.score)
        }
        check(before, 24) {
            $0.player.score = 13
            $0.player.energy = 0
        }
        var lastStage = before
        lastStage.stage = 8
        XCTAssertFalse(lastStage.actionMask()[24])
    }

    func testSC44Reduc() {
        var question = programBlock(.crash, spawn: 6)
        question.kind = .question
        let before = scenario(player: pos(0, 0)) {
            $0.player.credits = 2
            $0.player.energy = 1
            $0.own(.reduc)
            $0.putBlock(dataBlock(3), at: pos(1, 1))
            $0.putBlock(programBlock(.warp, spawn: 0), at: pos(1, 2))
            $0.putBlock(dataBlock(2, spawn: 0), at: pos(1, 3), siphoned: true)
            $0.putBlock(question, at: pos(1, 4))
        }
        check(before, 25) {
            $0.player.credits = 0
            $0.player.energy = 0
            $0.cells[pos(1, 1).index].block!.spawnCount = 2
            $0.cells[pos(1, 4).index].block!.spawnCount = 5
        }
    }

    func testSC45AtkPlusTwiceThenANewStage() {
        var state = scenario(player: pos(5, 4)) {
            $0.player.credits = 12
            $0.player.energy = 12
            $0.own(.atkPlus)
        }
        mustStep(&state, 26)
        XCTAssertEqual([state.player.attack, state.atkPlusUses, state.player.credits, state.player.energy], [2, 1, 8, 8])
        mustStep(&state, 26)
        XCTAssertEqual([state.player.attack, state.atkPlusUses, state.player.credits, state.player.energy], [3, 2, 4, 4])
        XCTAssertFalse(state.actionMask()[26])
        mustStep(&state, 3)
        XCTAssertEqual(state.stepIndex, 3)
        XCTAssertEqual(state.stage, 2)
        XCTAssertEqual(state.atkPlusUses, 0)
        XCTAssertEqual(state.player.attack, 3)
        XCTAssertTrue(state.actionMask()[26])
    }

    func testSC46Hack() {
        let before = scenario(player: pos(2, 2)) {
            $0.player.credits = 2
            $0.player.energy = 2
            $0.own(.hack)
            $0.putBlock(dataBlock(5, spawn: 0), at: pos(3, 2), siphoned: true)
            $0.cells[pos(2, 3).index].siphoned = true
            $0.putBlock(dataBlock(4), at: pos(4, 4))
            $0.enemies = [Enemy(type: .glitch, position: pos(3, 2), hp: 1), Enemy(type: .daemon, position: pos(2, 3)),
                          Enemy(type: .glitch, position: pos(4, 4))]
        }
        let (_, result) = check(before, 27) {
            $0.player.credits = 0
            $0.player.energy = 0
            $0.enemies = [Enemy(type: .daemon, position: pos(2, 3), hp: 2, stunned: true),
                          Enemy(type: .glitch, position: pos(4, 4))]
        }
        XCTAssertEqual(result.events.enemiesKilled, 1)
    }
}
