// Scenarios SC-12 and SC-13 (game-rules.md §6, §8.7).
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class SiphonTests: XCTestCase {
    func testSC12DrainingAFullCross() {
        let before = scenario(player: pos(2, 2)) {
            $0.player.dataSiphons = 1
            $0.putBlock(dataBlock(4), at: pos(3, 2))
            $0.putBlock(programBlock(.show, spawn: 2), at: pos(1, 2))
            $0.cells[pos(2, 1).index].credits = 2
            $0.cells[pos(2, 3).index].energy = 3
            $0.cells[pos(2, 2).index].credits = 1
            $0.cells[pos(4, 4).index].energy = 1
        }
        var state = before
        let result = mustStep(&state, 4)
        assertSameState(state, expected(after: before, phaseRan: true) {
            $0.cells[pos(2, 2).index].siphonCenter = true
            for p in pos(2, 2).cross { $0.cells[p.index].siphoned = true }
            $0.cells[pos(2, 2).index].credits = 0
            $0.cells[pos(2, 1).index].credits = 0
            $0.cells[pos(2, 3).index].energy = 0
            $0.cells[pos(3, 2).index].block!.spawnCount = 0
            $0.cells[pos(1, 2).index].block!.spawnCount = 0
            $0.own(.show)
            $0.player.score = 4
            $0.player.credits = 3
            $0.player.energy = 3
            $0.player.dataSiphons = 0
            $0.interval = 11
            $0.nextTaskTurn = 17
            $0.pending = 0
            $0.transmissions = [
                Transmission(position: pos(5, 2), enemyType: .virus, fromSiphon: true),
                Transmission(position: pos(5, 5), enemyType: .cryptog, fromSiphon: true),
                Transmission(position: pos(0, 0), enemyType: .virus, fromSiphon: true),
                Transmission(position: pos(5, 4), enemyType: .cryptog, fromSiphon: true),
                Transmission(position: pos(1, 3), enemyType: .glitch, fromSiphon: true),
                Transmission(position: pos(4, 2), enemyType: .cryptog, fromSiphon: true),
            ]
        })
        XCTAssertEqual(state.cells[pos(4, 4).index].energy, 1)
        let random = KeyedRandom(seed: 0, step: 0)
        XCTAssertEqual([32, 35, 0, 34, 9, 26].map { random.draw(.siphonTransmissionCell, $0) },
                       [0x0280_80c7, 0x0c75_bfe4, 0x1208_dad8, 0x13c2_a1df, 0x1a26_787e, 0x39c6_a0fd])
        XCTAssertEqual((0..<6).map { random.draw(.siphonTransmissionType, $0) },
                       [0x4ebb_9d00, 0xe43d_229b, 0xd5cc_3d38, 0x4dea_12fb, 0xd0b7_323e, 0x2a17_30af])
        let ev = result.events
        XCTAssertEqual([ev.blocksSiphoned, ev.programsAcquired, ev.creditsGained, ev.energyGained], [2, 1, 3, 3])
        XCTAssertTrue(ev.siphonUsed)
    }

    func testSC12PendingBeforeThePhase() {
        // The siphon alone (without the phase) queues 4 + 2 transmissions.
        var state = scenario(player: pos(2, 2)) {
            $0.player.dataSiphons = 1
            $0.putBlock(dataBlock(4), at: pos(3, 2))
            $0.putBlock(programBlock(.show, spawn: 2), at: pos(1, 2))
        }
        var events = StepEvents()
        state.siphon(&events)
        XCTAssertEqual(state.pending, 6)
    }

    func testSC13QuestionBlockOwnedProgramSiphonedCellsPendingKeptBySTEP() {
        var question = dataBlock(5)
        question.kind = .question
        let before = scenario(player: pos(2, 2)) {
            $0.stepActive = true
            $0.player.dataSiphons = 2
            $0.own(.push)
            $0.putBlock(question, at: pos(3, 2))
            $0.putBlock(programBlock(.push, spawn: 4), at: pos(1, 2))
            $0.putBlock(dataBlock(3, spawn: 0), at: pos(2, 1), siphoned: true)
            $0.cells[pos(2, 3).index].energy = 2
            $0.cells[pos(2, 3).index].siphoned = true
        }
        var state = before
        let result = mustStep(&state, 4)
        assertSameState(state, expected(after: before, phaseRan: false) {
            $0.player.score = 5
            $0.cells[pos(3, 2).index].block = dataBlock(5, spawn: 0)
            $0.cells[pos(3, 2).index].siphoned = true
            $0.cells[pos(1, 2).index].block!.spawnCount = 0
            $0.cells[pos(1, 2).index].siphoned = true
            $0.cells[pos(2, 2).index].siphoned = true
            $0.cells[pos(2, 2).index].siphonCenter = true
            $0.player.dataSiphons = 1
            $0.interval = 11
            $0.nextTaskTurn = 17
            $0.pending = 9
            $0.stepActive = false
        })
        XCTAssertEqual(result.events.programsAcquired, 0)
        XCTAssertEqual(result.events.blocksSiphoned, 2)
        XCTAssertEqual(state.turn, 0)
        XCTAssertTrue(state.history.isEmpty)
    }
}
