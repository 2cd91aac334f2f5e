import Testing
@Test func placeholder2() { #expect(Bool(true)) }
