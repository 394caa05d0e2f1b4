import CofferCore
import Testing

/// `COFFER_TEST_CLOCK` gives a debug build a manual clock at the time it names; anything but a
/// number is an error that names the variable (a release build refuses it: DebianPackageTests).
struct TestClockTests {
    @Test func unsetOrEmptyIsTheSystemsClock() throws {
        #expect(try TestClock.requested(in: [:]) == nil)
        #expect(try TestClock.requested(in: [TestClock.variable: ""]) == nil)
    }

    @Test func aTimeIsAManualClockStandingThere() throws {
        let clock = try #require(try TestClock.requested(in: [TestClock.variable: "1700000000123"]))
        #expect(clock.isManual && clock.milliseconds == 1_700_000_000_123)
    }

    @Test func anythingElseIsAnErrorNamingTheVariable() {
        for value in ["now", "-1", "1.5", "99999999999999999999999"] {
            #expect { try TestClock.requested(in: [TestClock.variable: value]) } throws: { "\($0)".contains(TestClock.variable) }
        }
    }
}
