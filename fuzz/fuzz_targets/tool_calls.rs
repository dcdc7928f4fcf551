#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ai::fuzz::tool_calls(data));
