// SC-02 and the per-program conditions of game-rules.md §3.2.
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class ActionMaskTests: XCTestCase {
    func testSC02aDirectionMask() {
        let state = scenario(player: pos(2, 2)) {
            $0.putBlock(dataBlock(2), at: pos(3, 2))
            $0.putBlock(dataBlock(2), at: pos(2, 3))
            $0.enemies = [Enemy(type: .daemon, position: pos(2, 3))]
            $0.transmissions = [Transmission(position: pos(2, 1), countdown: 2, enemyType: .virus)]
        }
        XCTAssertEqual(Array(state.actionMask()[0...3]), [false, true, true, true])
    }

    func testSC02bCornerMask() {
        let state = scenario(player: pos(0, 0))
        XCTAssertEqual(Array(state.actionMask()[0...3]), [true, false, false, true])
        XCTAssertEqual(state.actionMask().filter { $0 }.count, 2)
    }

    func testSiphonNeedsOnlyADataSiphon() {
        var state = scenario(player: pos(2, 2))
        XCTAssertFalse(state.actionMask()[4])
        state.player.dataSiphons = 1
        XCTAssertTrue(state.actionMask()[4])
    }

    func testProgramsNeedOwnershipAndCost() {
        var state = scenario(player: pos(2, 2)) { $0.player.energy = 1 }
        XCTAssertFalse(state.actionMask()[10])
        state.own(.wait)
        XCTAssertTrue(state.actionMask()[10])
        state.player.energy = 0
        XCTAssertFalse(state.actionMask()[10])
    }

    func testProgramConditions() {
        var state = scenario(player: pos(2, 2)) {
            $0.player.credits = 50
            $0.player.energy = 50
            for p in Program.allCases { $0.owned.insert(p.rawValue) }
        }
        func valid(_ p: Program) -> Bool { state.actionMask()[p.actionIndex] }
        // Empty board: only the unconditional ones and those whose flags allow them.
        for p in [Program.wait, .step, .siphPlus, .exch, .show, .calm, .score, .atkPlus] {
            XCTAssertTrue(valid(p), "\(p)")
        }
        for p in [Program.push, .pull, .poly, .crash, .warp, .debug, .row, .col, .undo, .reset, .dBom, .delay,
                  .antiV, .reduc, .hack] {
            XCTAssertFalse(valid(p), "\(p)")
        }
        state.enemies = [Enemy(type: .daemon, position: pos(3, 3))]
        XCTAssertTrue(valid(.push) && valid(.pull) && valid(.poly) && valid(.warp) && valid(.dBom) && valid(.crash))
        XCTAssertFalse(valid(.row) || valid(.col) || valid(.antiV) || valid(.debug))
        state.enemies = [Enemy(type: .virus, position: pos(2, 5))]
        XCTAssertTrue(valid(.row) && valid(.antiV))
        XCTAssertFalse(valid(.col) || valid(.crash))
        state.putBlock(dataBlock(3), at: pos(2, 5))
        XCTAssertTrue(valid(.debug) && valid(.reduc))
        state.cells[pos(2, 5).index].block!.spawnCount = 0
        XCTAssertFalse(valid(.reduc))
        state.cells[pos(0, 0).index].siphoned = true
        XCTAssertTrue(valid(.hack))
        state.player.hp = 2
        XCTAssertTrue(valid(.reset))
        state.stage = 8
        XCTAssertFalse(valid(.score))
        state.atkPlusUses = 2
        state.showActivated = true
        state.tasksDisabled = true
        XCTAssertFalse(valid(.atkPlus) || valid(.show) || valid(.calm))
        state.player.credits = 3
        XCTAssertFalse(valid(.exch))
        state.transmissions = [Transmission(position: pos(0, 3), enemyType: .glitch)]
        XCTAssertTrue(valid(.delay))
    }

    func testMaskIsAllFalseOnceTheGameIsOver() {
        var state = scenario(player: pos(2, 2))
        state.outcome = .won
        XCTAssertEqual(state.actionMask(), [Bool](repeating: false, count: 28))
    }
}
