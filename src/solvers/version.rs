//! A MIOpen version: what a user database's name or the command line says, and what decides the form
//! of an answer MIOpen reads ([`super::Solver::written_form`]).

use std::fmt;

/// A MIOpen version, as the user database's name says it (`HIP.3_3_0_2d1fd997a`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MiopenVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl MiopenVersion {
    /// The newest MIOpen whose rules tuneinfer has (the form its own answers are checked in).
    pub const NEWEST_KNOWN: MiopenVersion = MiopenVersion {
        major: 3,
        minor: 5,
        patch: 1,
    };

    /// From a user database's suffix (`HIP.3_3_0_2d1fd997a`, `HIP.3_2_0_36bb7fd4a-dirty`) or a
    /// dotted version (`3.5.1`); None for anything else.
    pub fn parse(text: &str) -> Option<MiopenVersion> {
        let t = text.trim();
        let t = t
            .split_once('.')
            .filter(|(b, _)| b.eq_ignore_ascii_case("hip") || b.eq_ignore_ascii_case("opencl"))
            .map_or(t, |(_, r)| r);
        let mut parts = t.split(['_', '.']);
        let mut num = || parts.next().and_then(|p| p.parse::<u32>().ok());
        Some(MiopenVersion {
            major: num()?,
            minor: num()?,
            patch: num()?,
        })
    }
}

impl fmt::Display for MiopenVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}
