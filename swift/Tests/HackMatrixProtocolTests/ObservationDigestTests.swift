// The observation digest (protocol.md §9.2) and the obsDigest request flag (§5.9).
import XCTest
import HackMatrixCore
@testable import HackMatrixProtocol
import HackMatrixTestSupport

final class ObservationDigestTests: XCTestCase {
    private func sha256(_ bytes: [UInt8]) -> String { ObservationDigest.hex(SHA256.hash(bytes)) }

    func testSHA256KnownAnswers() {
        // FIPS 180-4 examples, then lengths around the padding boundary and a multi-block
        // message (expected values from Python's hashlib).
        XCTAssertEqual(sha256([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(sha256(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(
            sha256(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        let counting: [Int: String] = [
            55: "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59",
            56: "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562",
            63: "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488",
            64: "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108",
        ]
        for (n, want) in counting {
            XCTAssertEqual(sha256((0..<n).map { UInt8($0) }), want, "bytes 0..<\(n)")
        }
        XCTAssertEqual(
            sha256((0..<1000).map { UInt8($0 % 251) }),
            "4e4c294b331f7a2099a379bec34b9f9fc03dc46ab465d998f4d683da53487e6d")
    }

    func testDigestIsOfLittleEndianFloat32WithNegativeZeroAsZero() {
        var flat = [Float](repeating: 0, count: ObservationEncoder.flatSize)
        let zeros = "sha256:7dd97faf40249b64a97579a5567eea8c51eb4fee7ba225834673227e084faee3"
        XCTAssertEqual(ObservationDigest.digest(flat: flat), zeros)
        flat[7] = -0.0
        XCTAssertEqual(ObservationDigest.digest(flat: flat), zeros)
        flat[0] = 1
        flat[1544] = 1.0 / 3.0
        XCTAssertEqual(
            ObservationDigest.digest(flat: flat),
            "sha256:be16bf22a44ab32bcb0bf498da889889884d5671ccb49ab0afb07d1c49f7a6da")
    }

    func testDigestOnlyWhenAsked() throws {
        var session = Session()
        let plain = send(&session, "{\"action\":\"reset\",\"seed\":5}")
        XCTAssertNil(plain["info"]?["obs_digest"])
        let asked = send(&session, "{\"action\":\"reset\",\"seed\":5,\"obsDigest\":true}")
        let expected = ObservationDigest.digest(of: try XCTUnwrap(session.game))
        XCTAssertEqual(asked["info"]?["obs_digest"]?.string, expected)
        XCTAssertEqual(asked["observation"], plain["observation"])
        let off = send(&session, "{\"action\":\"reset\",\"seed\":5,\"obsDigest\":false}")
        XCTAssertNil(off["info"]?["obs_digest"])
        XCTAssertNil(send(&session, "{\"action\":\"reset\",\"seed\":5,\"obsDigest\":null}")["info"]?["obs_digest"])

        let action = try XCTUnwrap(session.game?.actionMask().firstIndex(of: true))
        let stepped = send(&session, "{\"action\":\"step\",\"actionIndex\":\(action),\"obsDigest\":true}")
        XCTAssertEqual(
            stepped["info"]?["obs_digest"]?.string, ObservationDigest.digest(of: try XCTUnwrap(session.game)))

        let state = try XCTUnwrap(send(&session, "{\"action\":\"getState\"}")["state"])
        var writer = JSONWriter()
        writer.value(state)
        let loaded = send(&session, "{\"action\":\"setState\",\"obsDigest\":true,\"state\":\(writer.string)}")
        XCTAssertEqual(loaded["info"]?["obs_digest"], stepped["info"]?["obs_digest"])
    }

    func testDigestIsTheDigestOfTheNumericObservation() throws {
        var session = Session()
        send(&session, "{\"action\":\"reset\",\"seed\":9}")
        let state = try XCTUnwrap(session.game)
        let digest = ObservationDigest.digest(of: state)
        XCTAssertEqual(digest, ObservationDigest.digest(flat: ObservationEncoder.encodeFlat(state)))
        XCTAssertTrue(digest.hasPrefix("sha256:"))
        XCTAssertEqual(digest.count, 7 + 64)
        XCTAssertTrue(digest.dropFirst(7).allSatisfy { "0123456789abcdef".contains($0) })
    }

    func testAFlagThatIsNotABooleanIsAnInvalidRequest() {
        var session = Session()
        assertError(&session, "{\"action\":\"reset\",\"seed\":1,\"obsDigest\":1}", "invalid_request")
        assertError(&session, "{\"action\":\"setState\",\"state\":{},\"obsDigest\":\"yes\"}", "invalid_request")
        send(&session, "{\"action\":\"reset\",\"seed\":1}")
        assertError(&session, "{\"action\":\"step\",\"actionIndex\":0,\"obsDigest\":0}", "invalid_request")
        // The request is checked before the game: no_game only for a well-formed step.
        var fresh = Session()
        assertError(&fresh, "{\"action\":\"step\",\"actionIndex\":0,\"obsDigest\":[]}", "invalid_request")
    }
}
