import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class StageGenerationTests: XCTestCase {
    /// SC-47: `reset(0)`.
    func testSC47ResetSeed0() {
        let random = KeyedRandom(seed: 0, step: 0)
        XCTAssertEqual([0, 5, 30, 35].map { random.draw(.startCorner, $0) },
                       [0x9b3f_47ae, 0x92d9_c4b9, 0x1ac4_dec2, 0x2bf0_9a69])
        XCTAssertEqual([0, 5, 35].map { random.draw(.exitCorner, $0) }, [0x3385_66e7, 0x1b0a_b677, 0x3d49_169a])
        XCTAssertEqual(random.draw(.blockCount, 0), 0xa519_2338)
        XCTAssertEqual(random.draw(.stageTransmissionType, 0), 0xd370_12f0)
        let state = GameState.newGame(seed: 0)
        let board = parseBoard("""
            @e2 P:STEP/4 D6/6 e1 e2 S+c1
            e2 D4/4 e3 c2 e2 e2
            c2 c2 P:PUSH/4 P:SCORE/5 P:D_BOM/4 c1
            c2 P:DELAY/4 D3/3 c1 c1 c1
            e2 c1 e2 c1 c1 c1
            S+c2 c1 D3/3 e1 D7/7 X
            """)
        XCTAssertEqual(state.player.position, pos(5, 0))
        XCTAssertEqual(board.player, pos(5, 0))
        XCTAssertEqual(state.player.dataSiphons, 1)
        XCTAssertEqual(state.player.credits, 0)
        XCTAssertEqual(state.player.energy, 0)
        XCTAssertEqual(state.player.hp, 3)
        XCTAssertEqual(state.exit, pos(0, 5))
        XCTAssertEqual(state.cells.filter(\.isBlock).count, 10)
        assertCells(state.cells, board.cells)
        XCTAssertEqual(state.transmissions, [Transmission(position: pos(5, 3), countdown: 1, enemyType: .virus)])
        XCTAssertEqual(state.enemies, [])
        XCTAssertEqual(state.turn, 0)
        XCTAssertEqual(state.interval, 12)
        XCTAssertEqual(state.nextTaskTurn, 12)
        XCTAssertEqual(state.stage, 1)
        XCTAssertEqual(state.stepIndex, 0)
        XCTAssertEqual(state.outcome, .running)
        XCTAssertTrue(state.history.isEmpty)
    }

    func testSC47ResetSeed1() {
        let state = GameState.newGame(seed: 1)
        let board = parseBoard("""
            X c1 e1 P:RESET/2 e1 S+c2
            e2 e1 e2 D6/6 D8/8 e1
            e2 c1 e1 c2 c1 c2
            c1 Q:WAIT/1 P:SHOW/2 c2 e1 e1
            c1 e1 c1 e1 D2/2 c3
            @c1 D7/7 P:ROW/2 e3 e1 S+c1
            """)
        XCTAssertEqual(state.player.position, pos(0, 0))
        XCTAssertEqual(state.player.energy, 11)
        XCTAssertEqual(state.exit, pos(5, 0))
        XCTAssertEqual(state.cells.filter(\.isBlock).count, 8)
        assertCells(state.cells, board.cells)
        XCTAssertEqual(state.transmissions, [Transmission(position: pos(2, 3), countdown: 1, enemyType: .cryptog)])
    }

    func testSC47ResetSeed12345() {
        let state = GameState.newGame(seed: 12345)
        let board = parseBoard("""
            S+e2 c2 e2 c3 P:COL/2 S+c2
            c1 e2 e2 P:CALM/6 P:ROW/2 c1
            e3 e2 c2 c1 c1 e2
            c3 c1 e3 e2 c3 c1
            c2 e1 e1 e1 c2 D6/6
            X P:CRASH/6 D5/5 D2/2 e1 @e2
            """)
        XCTAssertEqual(state.player.position, pos(0, 5))
        XCTAssertEqual(state.player.credits, 10)
        XCTAssertEqual(state.exit, pos(0, 0))
        XCTAssertEqual(state.cells.filter(\.isBlock).count, 7)
        assertCells(state.cells, board.cells)
        XCTAssertEqual(state.transmissions, [Transmission(position: pos(3, 0), countdown: 1, enemyType: .virus)])
    }

    /// The first attempt whose cells form a valid layout, as §10.3 searches it.
    private func firstValidAttempt(seed: UInt32, step: UInt32, count: Int, excluded: Set<Int>, exit: Int) -> Int? {
        let random = KeyedRandom(seed: seed, step: step)
        let allowed = (0..<36).filter { !Rules.corners.contains($0) && !excluded.contains($0) }
        return (0..<Rules.blockAttempts).first { a in
            let chosen = random.pickCells(.blockCells, count, from: allowed, itemOffset: 36 * a)
            return GameState.layoutIsValid(blockCells: Set(chosen), exit: exit)
        }
    }

    func testFirstValidAttemptsQuotedInTheScenarios() {
        // SC-47 (seed 0): a = 6; SC-08 (step 5, enemy on 14, transmission on 21): a = 1; SC-29: a = 0.
        XCTAssertEqual(firstValidAttempt(seed: 0, step: 0, count: 10, excluded: [], exit: 5), 6)
        XCTAssertEqual(firstValidAttempt(seed: 0, step: 5, count: 9, excluded: [14, 21], exit: 5), 1)
        XCTAssertEqual(firstValidAttempt(seed: 0, step: 3, count: 7, excluded: [], exit: 0), 0)
        let random = KeyedRandom(seed: 0, step: 0)
        let allowed = (0..<36).filter { !Rules.corners.contains($0) }
        let attempt6 = random.pickCells(.blockCells, 10, from: allowed, itemOffset: 216).sorted()
        let state = GameState.newGame(seed: 0)
        XCTAssertEqual(state.cells.indices.filter { state.cells[$0].isBlock }, attempt6)
    }

    func testLayoutValidity() {
        // Exit at 35: walls that leave everything reachable are valid.
        XCTAssertTrue(GameState.layoutIsValid(blockCells: [7, 8], exit: 35))
        // (0,1) and (1,0) blocked: cell 0 is cut off from the rest.
        XCTAssertFalse(GameState.layoutIsValid(blockCells: [1, 6], exit: 35))
        // (4,5) is reachable only through the exit (5,5), which is reached but never passed through.
        XCTAssertFalse(GameState.layoutIsValid(blockCells: [23, 28], exit: 35))
        XCTAssertTrue(GameState.layoutIsValid(blockCells: [23, 28], exit: 30))
        // A block surrounded by blocks cannot be siphoned.
        XCTAssertFalse(GameState.layoutIsValid(blockCells: [14, 8, 20, 13, 15], exit: 35))
    }

    func testPlayerNotOnACornerStillGetsOneExitAtACorner() {
        var state = scenario(player: pos(2, 2))
        state.cells[35] = Cell()
        state.generateStage()
        XCTAssertTrue(Rules.corners.contains(state.exit.index))
        XCTAssertEqual(state.cells.filter { $0.content == .exit }.count, 1)
        XCTAssertEqual(state.cells.filter { $0.content == .dataSiphon }.count, 3)
    }
}
