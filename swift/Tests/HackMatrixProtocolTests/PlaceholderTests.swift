import XCTest
@testable import HackMatrixProtocol
final class PlaceholderProtocolTests: XCTestCase { func testNothing() {} }
