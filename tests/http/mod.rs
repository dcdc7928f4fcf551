//! Integration tests of the HTTP providers against a scripted local server: the exact requests,
//! streaming and usage, every kind of failure, secrets, rate limits, configuration, `ai init`
//! `ai list`, and Amazon Bedrock's binary event stream and SigV4. Nothing leaves 127.0.0.1.

mod bedrock;
mod config;
mod embed_server;
mod engine;
mod faults;
mod hostile_bounds;
mod hostile_net;
mod hostile_signals;
mod hostile_term;
mod init;
mod ratelimit;
mod requests;
mod secrets;
mod streams;
mod tools;
mod tools_commands;
mod tools_mcp;
mod tools_mcp_hostile;
mod window_edges;
