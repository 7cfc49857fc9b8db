import XCTest
@testable import HackMatrixCore
final class PlaceholderCoreTests: XCTestCase { func testTypes() { XCTAssertEqual(Program.allCases.count, 23) } }
