//! `cudaError_t` names and values, extracted from CUDA 13.0's `driver_types.h`
//! (`enum cudaError`), so that specs can name errors instead of numbers.

/// Every `cudaError_t` enumerator of CUDA 13.0.
pub const CUDA_ERRORS: &[(&str, u32)] = &[
    ("cudaSuccess", 0),
    ("cudaErrorInvalidValue", 1),
    ("cudaErrorMemoryAllocation", 2),
    ("cudaErrorInitializationError", 3),
    ("cudaErrorCudartUnloading", 4),
    ("cudaErrorProfilerDisabled", 5),
    ("cudaErrorProfilerNotInitialized", 6),
    ("cudaErrorProfilerAlreadyStarted", 7),
    ("cudaErrorProfilerAlreadyStopped", 8),
    ("cudaErrorInvalidConfiguration", 9),
    ("cudaErrorInvalidPitchValue", 12),
    ("cudaErrorInvalidSymbol", 13),
    ("cudaErrorInvalidHostPointer", 16),
    ("cudaErrorInvalidDevicePointer", 17),
    ("cudaErrorInvalidTexture", 18),
    ("cudaErrorInvalidTextureBinding", 19),
    ("cudaErrorInvalidChannelDescriptor", 20),
    ("cudaErrorInvalidMemcpyDirection", 21),
    ("cudaErrorAddressOfConstant", 22),
    ("cudaErrorTextureFetchFailed", 23),
    ("cudaErrorTextureNotBound", 24),
    ("cudaErrorSynchronizationError", 25),
    ("cudaErrorInvalidFilterSetting", 26),
    ("cudaErrorInvalidNormSetting", 27),
    ("cudaErrorMixedDeviceExecution", 28),
    ("cudaErrorNotYetImplemented", 31),
    ("cudaErrorMemoryValueTooLarge", 32),
    ("cudaErrorStubLibrary", 34),
    ("cudaErrorInsufficientDriver", 35),
    ("cudaErrorCallRequiresNewerDriver", 36),
    ("cudaErrorInvalidSurface", 37),
    ("cudaErrorDuplicateVariableName", 43),
    ("cudaErrorDuplicateTextureName", 44),
    ("cudaErrorDuplicateSurfaceName", 45),
    ("cudaErrorDevicesUnavailable", 46),
    ("cudaErrorIncompatibleDriverContext", 49),
    ("cudaErrorMissingConfiguration", 52),
    ("cudaErrorPriorLaunchFailure", 53),
    ("cudaErrorLaunchMaxDepthExceeded", 65),
    ("cudaErrorLaunchFileScopedTex", 66),
    ("cudaErrorLaunchFileScopedSurf", 67),
    ("cudaErrorSyncDepthExceeded", 68),
    ("cudaErrorLaunchPendingCountExceeded", 69),
    ("cudaErrorInvalidDeviceFunction", 98),
    ("cudaErrorNoDevice", 100),
    ("cudaErrorInvalidDevice", 101),
    ("cudaErrorDeviceNotLicensed", 102),
    ("cudaErrorSoftwareValidityNotEstablished", 103),
    ("cudaErrorStartupFailure", 127),
    ("cudaErrorInvalidKernelImage", 200),
    ("cudaErrorDeviceUninitialized", 201),
    ("cudaErrorMapBufferObjectFailed", 205),
    ("cudaErrorUnmapBufferObjectFailed", 206),
    ("cudaErrorArrayIsMapped", 207),
    ("cudaErrorAlreadyMapped", 208),
    ("cudaErrorNoKernelImageForDevice", 209),
    ("cudaErrorAlreadyAcquired", 210),
    ("cudaErrorNotMapped", 211),
    ("cudaErrorNotMappedAsArray", 212),
    ("cudaErrorNotMappedAsPointer", 213),
    ("cudaErrorECCUncorrectable", 214),
    ("cudaErrorUnsupportedLimit", 215),
    ("cudaErrorDeviceAlreadyInUse", 216),
    ("cudaErrorPeerAccessUnsupported", 217),
    ("cudaErrorInvalidPtx", 218),
    ("cudaErrorInvalidGraphicsContext", 219),
    ("cudaErrorNvlinkUncorrectable", 220),
    ("cudaErrorJitCompilerNotFound", 221),
    ("cudaErrorUnsupportedPtxVersion", 222),
    ("cudaErrorJitCompilationDisabled", 223),
    ("cudaErrorUnsupportedExecAffinity", 224),
    ("cudaErrorUnsupportedDevSideSync", 225),
    ("cudaErrorContained", 226),
    ("cudaErrorInvalidSource", 300),
    ("cudaErrorFileNotFound", 301),
    ("cudaErrorSharedObjectSymbolNotFound", 302),
    ("cudaErrorSharedObjectInitFailed", 303),
    ("cudaErrorOperatingSystem", 304),
    ("cudaErrorInvalidResourceHandle", 400),
    ("cudaErrorIllegalState", 401),
    ("cudaErrorLossyQuery", 402),
    ("cudaErrorSymbolNotFound", 500),
    ("cudaErrorNotReady", 600),
    ("cudaErrorIllegalAddress", 700),
    ("cudaErrorLaunchOutOfResources", 701),
    ("cudaErrorLaunchTimeout", 702),
    ("cudaErrorLaunchIncompatibleTexturing", 703),
    ("cudaErrorPeerAccessAlreadyEnabled", 704),
    ("cudaErrorPeerAccessNotEnabled", 705),
    ("cudaErrorSetOnActiveProcess", 708),
    ("cudaErrorContextIsDestroyed", 709),
    ("cudaErrorAssert", 710),
    ("cudaErrorTooManyPeers", 711),
    ("cudaErrorHostMemoryAlreadyRegistered", 712),
    ("cudaErrorHostMemoryNotRegistered", 713),
    ("cudaErrorHardwareStackError", 714),
    ("cudaErrorIllegalInstruction", 715),
    ("cudaErrorMisalignedAddress", 716),
    ("cudaErrorInvalidAddressSpace", 717),
    ("cudaErrorInvalidPc", 718),
    ("cudaErrorLaunchFailure", 719),
    ("cudaErrorCooperativeLaunchTooLarge", 720),
    ("cudaErrorTensorMemoryLeak", 721),
    ("cudaErrorNotPermitted", 800),
    ("cudaErrorNotSupported", 801),
    ("cudaErrorSystemNotReady", 802),
    ("cudaErrorSystemDriverMismatch", 803),
    ("cudaErrorCompatNotSupportedOnDevice", 804),
    ("cudaErrorMpsConnectionFailed", 805),
    ("cudaErrorMpsRpcFailure", 806),
    ("cudaErrorMpsServerNotReady", 807),
    ("cudaErrorMpsMaxClientsReached", 808),
    ("cudaErrorMpsMaxConnectionsReached", 809),
    ("cudaErrorMpsClientTerminated", 810),
    ("cudaErrorCdpNotSupported", 811),
    ("cudaErrorCdpVersionMismatch", 812),
    ("cudaErrorStreamCaptureUnsupported", 900),
    ("cudaErrorStreamCaptureInvalidated", 901),
    ("cudaErrorStreamCaptureMerge", 902),
    ("cudaErrorStreamCaptureUnmatched", 903),
    ("cudaErrorStreamCaptureUnjoined", 904),
    ("cudaErrorStreamCaptureIsolation", 905),
    ("cudaErrorStreamCaptureImplicit", 906),
    ("cudaErrorCapturedEvent", 907),
    ("cudaErrorStreamCaptureWrongThread", 908),
    ("cudaErrorTimeout", 909),
    ("cudaErrorGraphExecUpdateFailure", 910),
    ("cudaErrorExternalDevice", 911),
    ("cudaErrorInvalidClusterSize", 912),
    ("cudaErrorFunctionNotLoaded", 913),
    ("cudaErrorInvalidResourceType", 914),
    ("cudaErrorInvalidResourceConfiguration", 915),
    ("cudaErrorUnknown", 999),
    ("cudaErrorApiFailureBase", 10000),
];

/// The value of a `cudaError_t` name.
pub fn cuda_error_value(name: &str) -> Option<u32> {
    CUDA_ERRORS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, v)| v)
}

/// The name of a `cudaError_t` value (the first enumerator with it).
pub fn cuda_error_name(value: u32) -> Option<&'static str> {
    CUDA_ERRORS
        .iter()
        .find(|&&(_, v)| v == value)
        .map(|&(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(cuda_error_value("cudaSuccess"), Some(0));
        assert_eq!(
            cuda_error_value("cudaErrorLaunchPendingCountExceeded"),
            Some(69)
        );
        assert_eq!(
            cuda_error_name(69),
            Some("cudaErrorLaunchPendingCountExceeded")
        );
        assert_eq!(cuda_error_value("cudaErrorNope"), None);
    }
}
