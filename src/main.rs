//! `ai`: one short command for every AI model. The program is in `lib.rs`.

fn main() {
    std::process::exit(ai::main());
}
