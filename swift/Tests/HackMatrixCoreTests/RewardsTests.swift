// Worked examples R1..R7 of rewards.md §9: every component and the total.
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class RewardsTests: XCTestCase {
    private func index(_ name: String) -> Int { RewardComponents.names.firstIndex(of: name)! }

    /// Listed components have exactly the given values; all others are +0.0.
    private func assertComponents(
        _ result: StepResult, _ listed: [String: Double], total: Double? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        var expected = [Double](repeating: 0, count: 15)
        for (name, value) in listed { expected[index(name)] = value }
        for i in 0..<15 {
            XCTAssertEqual(result.components.values[i].bitPattern, expected[i].bitPattern,
                           "\(RewardComponents.names[i]): \(result.components.values[i]) vs \(expected[i])",
                           file: file, line: line)
        }
        XCTAssertEqual(result.reward, expected.reduce(0.0, +), "total is the canonical-order sum", file: file, line: line)
        if let total { XCTAssertEqual(result.reward, total, "total", file: file, line: line) }
    }

    func testR1TowardsTheExitThenAway() {
        var state = scenario(player: pos(0, 0))
        assertComponents(mustStep(&state, 0), ["step_penalty": -0.01, "distance_shaping": 0.05], total: 0.04)
        assertComponents(mustStep(&state, 1), ["step_penalty": -0.01], total: -0.01)
    }

    private func resetState(hp: Int) -> GameState {
        scenario(player: pos(3, 3)) {
            $0.player.hp = hp
            $0.player.energy = 4
            $0.own(.reset)
        }
    }

    func testR2ResetAtTwoHP() {
        var state = resetState(hp: 2)
        assertComponents(mustStep(&state, 19), [
            "step_penalty": -0.01, "resource_gain": -0.2, "hp_recovery": 1.0, "program_waste": -0.3,
        ], total: 0.49000000000000005)
        var atOne = resetState(hp: 1)
        let result = mustStep(&atOne, 19)
        assertComponents(result, ["step_penalty": -0.01, "resource_gain": -0.2, "hp_recovery": 2.0])
        XCTAssertEqual(result.reward, 1.79, accuracy: 1e-12)
    }

    func testR3SiphonFromADominatedPosition() {
        var state = scenario(player: pos(2, 2)) {
            $0.player.dataSiphons = 1
            $0.putBlock(dataBlock(3), at: pos(2, 3))
            $0.cells[pos(1, 2).index].credits = 1
            $0.cells[pos(2, 5).index].credits = 3
            $0.cells[pos(3, 3).index].credits = 1
            $0.cells[pos(4, 3).index].energy = 2
        }
        XCTAssertEqual(state.siphonQuality(), SiphonQuality(optimal: false, missedCredits: 2, missedEnergy: 2))
        assertComponents(mustStep(&state, 4), [
            "step_penalty": -0.01, "score_gain": 1.5, "resource_gain": 0.05, "siphon_quality": -0.1,
        ], total: 1.44)
    }

    private func r4State(scheduled: Bool) -> GameState {
        scenario(player: pos(2, 2)) {
            $0.enemies = [Enemy(type: .virus, position: pos(2, 5), hp: 1, fromScheduled: scheduled),
                          Enemy(type: .daemon, position: pos(1, 2))]
        }
    }

    func testR4KillAlongTheLineThenAHit() {
        var state = r4State(scheduled: false)
        assertComponents(mustStep(&state, 3), ["step_penalty": -0.01, "kills": 0.3, "damage_penalty": -1.0],
                         total: -0.71)
        var scheduled = r4State(scheduled: true)
        assertComponents(mustStep(&scheduled, 3), ["step_penalty": -0.01, "damage_penalty": -1.0], total: -1.01)
    }

    func testR5CompletingStage3() {
        var state = scenario(player: pos(4, 5)) {
            $0.stage = 3
            $0.interval = 10
            $0.player.hp = 2
            $0.player.credits = 20
            $0.player.energy = 10
        }
        assertComponents(mustStep(&state, 0), [
            "step_penalty": -0.01, "stage_completion": 4.0, "distance_shaping": 0.05,
            "resource_holding": 0.30000000000000004, "hp_recovery": 1.0,
        ], total: 5.34)
        XCTAssertEqual(state.stage, 4)
    }

    func testR6TheWinningStep() {
        var state = scenario(player: pos(4, 5)) {
            $0.stage = 8
            $0.player.score = 10
            $0.player.credits = 7
            $0.player.energy = 3
        }
        let result = mustStep(&state, 0)
        assertComponents(result, [
            "step_penalty": -0.01, "stage_completion": 100.0, "distance_shaping": 0.05, "victory": 1500.0,
            "resource_holding": 7.0 * 0.01 + 3.0 * 0.01,
        ])
        XCTAssertEqual(result.reward, 1600.14, accuracy: 1e-9)
        XCTAssertTrue(result.done)
        XCTAssertEqual(state.stage, 8)
    }

    private func r7State(stage: Int) -> GameState {
        scenario(player: pos(2, 2)) {
            $0.stage = stage
            $0.player.hp = 1
            $0.player.energy = 1
            $0.own(.wait)
            $0.enemies = [Enemy(type: .virus, position: pos(2, 3), fromSiphon: true)]
        }
    }

    func testR7KilledByASiphonSpawnedEnemy() {
        var state = r7State(stage: 3)
        assertComponents(mustStep(&state, 10), [
            "step_penalty": -0.01, "death_penalty": -1.5, "resource_gain": -0.05, "damage_penalty": -1.0,
            "siphon_death_penalty": -10.0,
        ], total: -12.56)
        var stage1 = r7State(stage: 1)
        let result = mustStep(&stage1, 10)
        assertComponents(result, [
            "step_penalty": -0.01, "resource_gain": -0.05, "damage_penalty": -1.0, "siphon_death_penalty": -10.0,
        ])
        XCTAssertEqual(result.reward, -11.06, accuracy: 1e-12)
        XCTAssertEqual(result.components.values[index("death_penalty")].sign, .plus)  // +0.0, never -0.0
    }

    func testDeathPenaltyByStage() {
        let table: [Double] = [0, -0.5, -1.5, -3.5, -7.5, -15.5, -31.5, -63.5]
        for stage in 1...8 {
            var state = r7State(stage: stage)
            XCTAssertEqual(mustStep(&state, 10).components.values[index("death_penalty")], table[stage - 1])
        }
    }
}
