// Worked examples A, B, B′ and C of observation.md §11, bit for bit.
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class ObservationTests: XCTestCase {
    private let third = Float(bitPattern: 0x3EAA_AAAB)
    private let twoThirds = Float(bitPattern: 0x3F2A_AAAB)
    private let fourNinths = Float(bitPattern: 0x3EE3_8E39)
    private let fiveNinths = Float(bitPattern: 0x3F0E_38E4)
    private let sevenNinths = Float(bitPattern: 0x3F47_1C72)
    private let oneSeventh = Float(bitPattern: 0x3E12_4925)
    private let threeSevenths = Float(bitPattern: 0x3EDB_6DB7)
    private let fifth = Float(bitPattern: 0x3E4C_CCCD)
    private let sixHundredths = Float(bitPattern: 0x3D75_C28F)

    /// Every listed entry has exactly the given bits; every other entry is +0.0.
    private func assertObservation(
        _ state: GameState, _ nonZero: [Int: Float], file: StaticString = #filePath, line: UInt = #line
    ) {
        let flat = ObservationEncoder.encodeFlat(state)
        XCTAssertEqual(flat.count, ObservationEncoder.flatSize, file: file, line: line)
        for (i, value) in flat.enumerated() {
            let want = nonZero[i] ?? 0
            if value.bitPattern != want.bitPattern {
                XCTFail("flat[\(i)]: got \(value) (\(String(value.bitPattern, radix: 16))), expected \(want)",
                        file: file, line: line)
            }
        }
    }

    func testExampleAStartOfAStage() {
        let state = scenario(player: pos(0, 0)) {
            $0.player.credits = 10
            $0.cells[pos(0, 5).index].content = .dataSiphon
            $0.cells[pos(0, 5).index].credits = 1
            $0.cells[pos(5, 0).index].content = .dataSiphon
            $0.cells[pos(5, 0).index].energy = 2
            $0.putBlock(dataBlock(4), at: pos(2, 3))
            $0.putBlock(programBlock(.warp, spawn: 5), at: pos(3, 1))
            $0.transmissions = [Transmission(position: pos(4, 4), countdown: 1, enemyType: .daemon)]
            $0.cells[pos(1, 1).index].credits = 2
            $0.cells[pos(2, 2).index].energy = 3
        }
        assertObservation(state, [
            2: 1.0, 3: fifth, 280: third, 282: 1.0, 364: twoThirds, 659: 1.0, 670: 1.0, 673: fourNinths,
            698: fourNinths, 839: 1.0, 846: 1.0, 866: fiveNinths, 1245: 0.25, 1331: twoThirds, 1332: 1.0,
            1543: 1.0,
        ])
    }

    private func exampleB(show: Bool) -> GameState {
        var state = GameState(seed: 0, player: pos(2, 2), exit: pos(0, 5))
        state.player.hp = 2
        state.player.energy = 55
        state.player.dataSiphons = 1
        state.player.attack = 2
        state.stage = 2
        state.own(.show)
        state.showActivated = show
        state.enemies = [
            Enemy(type: .cryptog, position: pos(2, 5), hp: 2),
            Enemy(type: .cryptog, position: pos(4, 4), hp: 1, lastKnown: pos(4, 3)),
            Enemy(type: .virus, position: pos(0, 2), hp: 2, stunned: true, fromSiphon: true),
        ]
        state.transmissions = [Transmission(position: pos(3, 0), countdown: 4, enemyType: .glitch)]
        return state
    }

    private var exampleBEntries: [Int: Float] {
        [0: 0.4, 1: 0.4, 2: twoThirds, 4: 1.0, 5: oneSeventh, 6: 0.1, 7: 0.5, 23: 1.0, 117: 1.0, 121: twoThirds,
         122: 1.0, 123: 1.0, 283: 1.0, 750: 1.0, 751: twoThirds, 825: 1.0]
    }

    func testExampleBCryptogVisibility() {
        let state = exampleB(show: false)
        assertObservation(state, exampleBEntries)
        XCTAssertEqual(state.cryptogHints(), [pos(4, 3)])
        XCTAssertNil(state.visibleEnemyIndex(at: pos(4, 4)))
        XCTAssertEqual(state.visibleEnemyIndex(at: pos(2, 5)), 0)
    }

    func testExampleBPrimeWithShow() {
        let state = exampleB(show: true)
        var entries = exampleBEntries
        entries[8] = 1.0
        entries[1212] = 1.0
        entries[1213] = third
        assertObservation(state, entries)
        XCTAssertEqual(state.cryptogHints(), [])
    }

    func testExampleCAfterASiphonWithSaturatedEntries() {
        var state = GameState(seed: 0, player: pos(1, 1), exit: pos(5, 5))
        state.player.hp = 2
        state.player.credits = 3
        state.player.energy = 60
        state.player.dataSiphons = 12
        state.player.attack = 3
        state.stage = 4
        state.own(.warp, .atkPlus)
        state.tasksDisabled = true
        state.putBlock(dataBlock(7, spawn: 0), at: pos(1, 2), siphoned: true)
        state.cells[pos(1, 2).index].credits = 2
        state.putBlock(programBlock(.atkPlus, spawn: 0), at: pos(0, 1), siphoned: true)
        var question = dataBlock(5)
        question.kind = .question
        state.putBlock(question, at: pos(3, 4))
        state.cells[pos(3, 4).index].energy = 1
        state.cells[pos(1, 1).index].siphoned = true
        state.cells[pos(1, 1).index].siphonCenter = true
        state.cells[pos(1, 0).index].siphoned = true
        state.cells[pos(2, 1).index].siphoned = true
        assertObservation(state, [
            0: fifth, 1: fifth, 2: twoThirds, 3: sixHundredths, 4: 1.0, 5: threeSevenths, 6: 1.0, 7: 1.0, 9: 1.0,
            13: 1.0, 31: 1.0, 83: 1.0, 86: 1.0, 108: 1.0, 368: 1.0, 376: 1.0, 379: sevenNinths, 380: 1.0,
            406: twoThirds, 966: 1.0, 1543: 1.0,
        ])
        XCTAssertFalse(state.resourceVisible(at: pos(3, 4)))
        XCTAssertTrue(state.resourceVisible(at: pos(1, 2)))
    }

    func testHintsFollowTheCellOrderOfTheHiddenCryptogs() {
        var state = scenario(player: pos(0, 0))
        state.enemies = [
            Enemy(type: .cryptog, position: pos(4, 4), lastKnown: pos(4, 0)),
            Enemy(type: .cryptog, position: pos(2, 3), lastKnown: pos(2, 0)),
            Enemy(type: .cryptog, position: pos(0, 3)),  // aligned: visible, no hint
        ]
        XCTAssertEqual(state.cryptogHints(), [pos(2, 0), pos(4, 0)])
    }

    func testEveryEntryOfARealGameStaysInTheUnitInterval() {
        var state = GameState.newGame(seed: 9)
        for _ in 0..<50 where state.outcome == .running {
            let flat = ObservationEncoder.encodeFlat(state)
            XCTAssertTrue(flat.allSatisfy { $0 >= 0 && $0 <= 1 && $0.bitPattern != (-Float(0)).bitPattern })
            XCTAssertEqual((0..<36).filter { flat[33 + 42 * $0 + 40] == 1 }.count, 1)
            mustStep(&state, state.actionMask().firstIndex(of: true)!)
        }
    }
}
