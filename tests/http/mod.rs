//! Integration tests of the HTTP providers against a scripted local server: the exact requests,
//! streaming and usage, every kind of failure, secrets, rate limits, configuration, `ai init`
//! and `ai list`. Nothing leaves 127.0.0.1.

mod config;
mod faults;
mod init;
mod ratelimit;
mod requests;
mod secrets;
mod streams;
