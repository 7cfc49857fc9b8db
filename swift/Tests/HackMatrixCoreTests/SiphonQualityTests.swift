// Siphon quality (rewards.md §6, game-rules.md §13.3).
import XCTest
@testable import HackMatrixCore
import HackMatrixTestSupport

final class SiphonQualityTests: XCTestCase {
    func testNothingToTakeEverywhereIsOptimal() {
        let state = scenario(player: pos(2, 2))
        XCTAssertEqual(state.siphonQuality(), SiphonQuality(optimal: true, missedCredits: 0, missedEnergy: 0))
    }

    func testWithoutBlocksEveryOpenCellIsACandidate() {
        let state = scenario(player: pos(0, 0)) {
            $0.cells[pos(0, 0).index].energy = 1
            $0.cells[pos(4, 4).index].energy = 3
            $0.cells[pos(3, 4).index].energy = 2
            $0.cells[pos(5, 5).index].credits = 1  // the credit maximum comes from another cell
        }
        XCTAssertEqual(state.siphonQuality(), SiphonQuality(optimal: false, missedCredits: 1, missedEnergy: 4))
    }

    func testADifferentBlockOfEqualPointsElsewhereDoesNotCount() {
        // The candidate set must reach the player's own block; (4,4)'s block is not it.
        let state = scenario(player: pos(1, 1)) {
            $0.putBlock(dataBlock(3), at: pos(1, 2))
            $0.putBlock(dataBlock(3), at: pos(4, 4))
            $0.cells[pos(4, 3).index].credits = 3
        }
        XCTAssertTrue(state.siphonQuality().optimal)
    }

    func testOwnedProgramBlocksAreNotWorthButStillConstrainCandidates() {
        let state = scenario(player: pos(2, 2)) {
            $0.own(.push)
            $0.putBlock(dataBlock(2), at: pos(3, 2))
            $0.putBlock(programBlock(.push), at: pos(1, 2))
            $0.cells[pos(2, 1).index].credits = 1
            $0.cells[pos(3, 1).index].credits = 3  // (3,1)'s cross misses (1,2): not a candidate
        }
        XCTAssertTrue(state.siphonQuality().optimal)
    }

    func testQuestionBlocksCountByHiddenContent() {
        var question = programBlock(.crash)
        question.kind = .question
        let state = scenario(player: pos(2, 2)) {
            $0.putBlock(question, at: pos(2, 3))
            $0.cells[pos(2, 4).index].energy = 1
        }
        XCTAssertEqual(state.siphonQuality(), SiphonQuality(optimal: false, missedCredits: 0, missedEnergy: 1))
    }

    func testStandingOnABlockYieldsNothing() {
        let state = scenario(player: pos(2, 2)) {
            $0.putBlock(dataBlock(2), at: pos(2, 2))
            $0.cells[pos(0, 0).index].credits = 1
        }
        XCTAssertEqual(state.siphonYield(standingOn: pos(2, 2)), SiphonYield())
        XCTAssertEqual(state.siphonQuality(), SiphonQuality(optimal: false, missedCredits: 1, missedEnergy: 0))
    }
}
