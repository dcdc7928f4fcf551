//! Start-up cost: `ai` is a PIE, so the dynamic loader patches every pointer in its read-only
//! tables (58,000 relative relocations, most of them in the HTML-entity and Unicode tables
//! of crates it links) before `main`, at each call. In the classic format that is a 1.4 MB
//! table read and applied entry by entry, 44% of the instructions of `ai echo`. The packed
//! format (DT_RELR: a few kilobytes of bitmaps) needs glibc 2.36 to load and binutils 2.38 or
//! lld 15 to link; it is asked for only when building natively on such a glibc, where the
//! binary runs, so a build elsewhere (an older glibc, musl, macOS, cross) is unchanged.
//! `AI_NO_RELR=1` leaves it out (a linker without the option, say).

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=AI_NO_RELR");
    let target = env::var("TARGET").unwrap_or_default();
    let native = env::var("HOST").is_ok_and(|host| host == target);
    if !native || target != "x86_64-unknown-linux-gnu" || env::var_os("AI_NO_RELR").is_some() {
        return;
    }
    if glibc_version().is_some_and(|v| v >= (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The running glibc's version, from `getconf GNU_LIBC_VERSION` ("glibc 2.36").
fn glibc_version() -> Option<(u32, u32)> {
    let out = Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut parts = text.trim().strip_prefix("glibc ")?.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}
