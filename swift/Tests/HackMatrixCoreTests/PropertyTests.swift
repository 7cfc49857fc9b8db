// Invariants over many random-policy episodes. The policy is the shared
// deterministic RandomPolicy (the engine never uses it).
// HACKMATRIX_SLOW=1 runs more episodes.
import Foundation
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class PropertyTests: XCTestCase {
    private var slow: Bool { ProcessInfo.processInfo.environment["HACKMATRIX_SLOW"] == "1" }
    private let maxActions = 400

    /// Plays one episode choosing uniformly among valid actions; checks invariants after every step.
    /// Returns the actions taken and the final state.
    private func playEpisode(seed: UInt32, checkRejection: Bool) -> (
        actions: [Int], results: [StepResult], final: GameState
    ) {
        var policy = RandomPolicy(seed: UInt64(seed) &* 7919 &+ 1)
        var state = GameState.newGame(seed: seed)
        checkGeneratedStage(state, seed: seed)
        var actions: [Int] = []
        var results: [StepResult] = []
        while state.outcome == .running && actions.count < maxActions {
            let mask = state.actionMask()
            guard let action = policy.pick(mask) else {
                XCTFail("seed \(seed): empty mask while running after \(actions.count) actions")
                break
            }
            if checkRejection, let masked = mask.indices.first(where: { !mask[$0] }) {
                let before = state
                XCTAssertThrowsError(try state.step(masked))
                XCTAssertEqual(state, before, "seed \(seed): a rejected action changed the state")
            }
            let stageBefore = state.stage
            let result: StepResult
            do { result = try state.step(action) } catch {
                XCTFail("seed \(seed): valid action \(action) rejected: \(error)")
                break
            }
            actions.append(action)
            results.append(result)
            checkInvariants(state, seed: seed)
            if state.stage != stageBefore { checkGeneratedStage(state, seed: seed) }
            if result.done != (state.outcome != .running) { XCTFail("seed \(seed): done flag") }
            if result.components.values.contains(where: { $0 == 0 && $0.sign == .minus }) {
                XCTFail("seed \(seed): a -0.0 component")
            }
        }
        return (actions, results, state)
    }

    /// Checked with plain conditions so the common (passing) case stays cheap; the
    /// failure message names the first broken invariant.
    private func checkInvariants(_ state: GameState, seed: UInt32) {
        if let broken = brokenInvariant(state) { XCTFail("seed \(seed), stepIndex \(state.stepIndex): \(broken)") }
    }

    private func brokenInvariant(_ state: GameState) -> String? {
        let p = state.player
        if !(p.hp >= 0 && p.hp <= 3 && p.credits >= 0 && p.energy >= 0 && p.dataSiphons >= 0) { return "player \(p)" }
        var occupied = [Bool](repeating: false, count: Rules.cellCount)
        occupied[p.position.index] = true
        for e in state.enemies {
            if occupied[e.position.index] { return "two occupants on \(e.position)" }
            occupied[e.position.index] = true
            if !(e.hp >= 1 && e.hp <= e.type.maxHP && e.disabled == 0) { return "enemy \(e)" }
        }
        for t in state.transmissions {
            if occupied[t.position.index] { return "two occupants on \(t.position)" }
            occupied[t.position.index] = true
            if state.isBlock(t.position) || t.countdown < 1 { return "transmission \(t)" }
        }
        if !Rules.corners.contains(state.exit.index) { return "exit \(state.exit) not at a corner" }
        for (c, cell) in state.cells.enumerated() {
            if (cell.content == .exit) != (c == state.exit.index) { return "EXIT content at \(c), exit \(state.exit)" }
            if (cell.block != nil) != (cell.content == .block) { return "block record mismatch at \(c)" }
            if cell.credits > 0 && cell.energy > 0 { return "two resources at \(c)" }
        }
        if state.history.count > Rules.undoDepth { return "history depth \(state.history.count)" }
        if !(1...8).contains(state.stage) { return "stage \(state.stage)" }
        return nil
    }

    /// A freshly generated stage: blocks as created, corners as they should be.
    private func checkGeneratedStage(_ state: GameState, seed: UInt32) {
        for (c, cell) in state.cells.enumerated() {
            if let block = cell.block {
                XCTAssertFalse(Rules.corners.contains(c))
                XCTAssertFalse(cell.siphoned)
                if block.isDataBearing {
                    XCTAssertEqual(block.points, block.spawnCount, "seed \(seed): data block at \(c)")
                    XCTAssertTrue((1...9).contains(block.points))
                } else {
                    XCTAssertEqual(block.spawnCount, Program(rawValue: block.program)!.spawnCost)
                }
                XCTAssertEqual(cell.credits + cell.energy, 0, "seed \(seed): resource under a new block")
            }
        }
        let programs = state.cells.compactMap { $0.block }.filter(\.isProgramBearing).map(\.program)
        XCTAssertEqual(Set(programs).count, programs.count, "seed \(seed): a program repeats within a stage")
        XCTAssertTrue(state.history.isEmpty)
        XCTAssertEqual(state.turn, 0)
        for corner in Rules.corners where corner != state.exit.index && corner != state.player.position.index {
            XCTAssertEqual(state.cells[corner].content, .dataSiphon)
        }
        XCTAssertEqual(state.cells[state.exit.index].credits + state.cells[state.exit.index].energy, 0)
    }

    func testRandomPolicyEpisodesKeepTheInvariants() {
        let episodes = slow ? 5000 : 2000
        var stages = [Int](repeating: 0, count: 9)
        var outcomes = [Outcome: Int]()
        for seed in 0..<UInt32(episodes) {
            let run = playEpisode(seed: seed &* 2_654_435_761, checkRejection: seed % 8 == 0)
            stages[run.final.stage] += 1
            outcomes[run.final.outcome, default: 0] += 1
        }
        // The random policy does reach later stages and both endings sometimes.
        XCTAssertGreaterThan(stages[2...].reduce(0, +), 0)
        XCTAssertGreaterThan(outcomes[.died] ?? 0, 0)
    }

    func testTheSameSeedAndActionsGiveTheSameGame() {
        for seed: UInt32 in [0, 1, 2, 12345, 0xDEAD_BEEF, UInt32.max] {
            let first = playEpisode(seed: seed, checkRejection: false)
            var replay = GameState.newGame(seed: seed)
            var results: [StepResult] = []
            for action in first.actions { results.append(mustStep(&replay, action)) }
            XCTAssertEqual(replay, first.final)
            XCTAssertEqual(results, first.results)
            XCTAssertEqual(ObservationEncoder.encodeFlat(replay), ObservationEncoder.encodeFlat(first.final))
        }
    }

    func testDifferentSeedsGiveDifferentBoards() {
        let boards = Set((0..<50).map { GameState.newGame(seed: UInt32($0)).cells.map(\.content.hashValue) })
        XCTAssertGreaterThan(boards.count, 45)
    }
}
