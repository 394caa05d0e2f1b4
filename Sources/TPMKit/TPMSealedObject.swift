/// A secret sealed by a TPM: its public and private areas as the TPM marshals them. Only the
/// TPM that made it, under the same owner seed, can load it; the private area is encrypted by
/// that TPM, so these bytes may be stored anywhere.
public struct TPMSealedObject: Sendable, Equatable {
    public let publicArea: [UInt8]
    public let privateArea: [UInt8]

    public init(publicArea: [UInt8], privateArea: [UInt8]) {
        self.publicArea = publicArea
        self.privateArea = privateArea
    }
}
