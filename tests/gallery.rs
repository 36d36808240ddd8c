//! The gallery (`report/build/site/`) of the small study of `build_report`, in headless
//! Chromium: every page loads with no console message, the matrix cells with a title are
//! exactly the filled cells of every model's two matrices, and a screenshot is not blank.
//! The explorer is driven over Chrome's DevTools protocol ([`Browser`]) by real clicks and
//! key presses: it picks a model, toggles the view, steps the replay, compares two
//! models and reads a seed's history, and the DOM and a screenshot are checked in each
//! state.
//!
//! Chromium comes from `scripts/chromium-env` (Debian's package), which the test command
//! runs and which sets `DRIFT_CHROMIUM`: then a missing or failing Chromium fails the test.
//! Without the variable the test looks for `chromium` on the PATH and, when there is none,
//! says so and returns. Set `DRIFT_GALLERY_SHOTS` to a folder to keep the screenshots.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build_report::built;

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("DRIFT_CHROMIUM") {
        return Some(path.into());
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        eprintln!(
            "gallery: no Chromium here; the test command installs it (eval \"$(scripts/chromium-env)\")"
        );
    }
    found
}

/// Headless Chromium with its own profile folder, as both tests start it.
fn chromium_command(chromium: &Path, profile: &Path) -> Command {
    let mut command = Command::new(chromium);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()));
    command
}

/// Runs headless Chromium on `page` with `args`; returns (stdout, the console lines of
/// its log).
fn headless(chromium: &Path, profile: &Path, page: &Path, args: &[&str]) -> (String, Vec<String>) {
    let out = chromium_command(chromium, profile)
        .args(["--enable-logging=stderr", "--v=0"])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", chromium.display()));
    assert!(
        out.status.success(),
        "chromium on {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let log = String::from_utf8_lossy(&out.stderr);
    let console = log
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(String::from)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

/// How many `<rect class="cell">` of a DOM carry a `<title>`.
fn titled_cells(dom: &str) -> usize {
    dom.split("<rect class=\"cell\"")
        .skip(1)
        .filter(|rest| {
            let end = rest.find("</rect>").unwrap_or(rest.len());
            rest[..end].contains("<title>")
        })
        .count()
}

/// Whether a PNG is not blank: at least 0.2% of its pixels differ from its first (a page
/// of a few lines of text on white is about 1%).
fn not_blank(png_path: &Path) -> bool {
    let decoder = png::Decoder::new(std::io::BufReader::new(fs::File::open(png_path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bytes = &buf[..info.buffer_size()];
    let px = info.color_type.samples();
    let first = &bytes[..px];
    let other = bytes.chunks(px).filter(|p| *p != first).count();
    other * 500 > bytes.len() / px
}

/// Where the screenshots go: `DRIFT_GALLERY_SHOTS` when set (to look at them), else
/// inside the built copy.
fn shots_dir(root: &Path) -> PathBuf {
    let shots = std::env::var_os("DRIFT_GALLERY_SHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("shots"));
    fs::create_dir_all(&shots).unwrap();
    shots
}

/// The built copy's studies, analysed as the report analyses them.
fn studies(root: &Path) -> Vec<drift::report::study::LoadedStudy> {
    let specs = drift::report::study::read_specs(&root.join("report/studies.toml")).unwrap();
    drift::report::study::load(root, "results", &specs).unwrap()
}

#[test]
fn every_gallery_page_loads_cleanly_with_a_title_on_every_filled_cell() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = built();
    let root = dir.path();
    let site = root.join("report/build/site");
    let profile = tempfile::tempdir().unwrap();
    let shots = shots_dir(root);

    // The filled cells, from the artifacts: each model's seed mean and deviation.
    let studies = studies(root);
    let filled: usize = studies[0]
        .analysis
        .models
        .iter()
        .map(|m| m.mean.filled().count() + m.deviation.filled().count())
        .sum();
    assert!(filled > 0);

    let mut pages: Vec<PathBuf> = fs::read_dir(&site)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    let names: Vec<String> = pages
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["explorer.html", "index.html", "tiny.html"]);
    for page in &pages {
        let (dom, console) = headless(&chromium, profile.path(), page, &["--dump-dom"]);
        assert!(console.is_empty(), "{}: {console:?}", page.display());
        assert!(dom.contains("</nav>"), "{}: {dom}", page.display());
        let shot = shots.join(page.with_extension("png").file_name().unwrap());
        let size = "--window-size=1280,1600";
        let (_, console) = headless(
            &chromium,
            profile.path(),
            page,
            &[&format!("--screenshot={}", shot.display()), size],
        );
        assert!(console.is_empty(), "{}: {console:?}", page.display());
        assert!(not_blank(&shot), "{} is blank", shot.display());
        if names.iter().any(|n| page.ends_with(n) && n == "tiny.html") {
            assert_eq!(titled_cells(&dom), filled, "{}", page.display());
            // The title says what the cell is.
            assert!(
                dom.contains("<title>cnn_s: trained through 2001, evaluated on 2002: "),
                "{dom}"
            );
        }
    }

    // The check can fail: a page that logs an error and asks for a missing file is caught.
    let bad = root.join("bad.html");
    fs::write(
        &bad,
        "<!DOCTYPE html><html><body><img src=\"missing.png\"><script>console.error(\"broken\")</script></body></html>",
    )
    .unwrap();
    let (_, console) = headless(&chromium, profile.path(), &bad, &["--dump-dom"]);
    assert!(console.iter().any(|l| l.contains("broken")), "{console:?}");
}

/// Headless Chromium driven over its DevTools protocol (one page, one flattened session):
/// clicks and key presses go through `Input.dispatch*`, as a user's would, and every
/// console message, uncaught exception and log entry of the page is kept.
struct Browser {
    child: std::process::Child,
    ws: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>,
    session: String,
    next: u64,
    events: Vec<serde_json::Value>,
}

impl Browser {
    fn launch(chromium: &Path, profile: &Path) -> Browser {
        use std::io::BufRead;
        let mut child = chromium_command(chromium, profile)
            .args(["--remote-debugging-port=0", "about:blank"])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", chromium.display()));
        // Chromium prints its endpoint on stderr; the rest is drained so that it never
        // blocks on a full pipe.
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if let Some(at) = line.find("ws://") {
                    let _ = tx.send(line[at..].trim().to_string());
                }
            }
        });
        let url = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("Chromium printed no DevTools endpoint");
        let (ws, _) = tungstenite::connect(url.as_str()).unwrap();
        if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
                .unwrap();
        }
        let mut b = Browser {
            child,
            ws,
            session: String::new(),
            next: 0,
            events: Vec::new(),
        };
        let target = b.call(
            "Target.createTarget",
            serde_json::json!({"url": "about:blank"}),
        );
        let attached = b.call(
            "Target.attachToTarget",
            serde_json::json!({"targetId": target["targetId"], "flatten": true}),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            b.call(domain, serde_json::json!({}));
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            serde_json::json!({"width": 1280, "height": 1500, "deviceScaleFactor": 1, "mobile": false}),
        );
        b
    }

    /// Sends a command (to the page's session once attached) and returns its result,
    /// keeping the events that arrive meanwhile.
    fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next += 1;
        let mut message = serde_json::json!({"id": self.next, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = self.session.clone().into();
        }
        self.ws
            .send(tungstenite::Message::text(message.to_string()))
            .unwrap();
        loop {
            let reply = self.receive();
            if reply["id"] == self.next {
                assert!(reply.get("error").is_none(), "{method}: {reply}");
                return reply["result"].clone();
            }
            self.events.push(reply);
        }
    }

    fn receive(&mut self) -> serde_json::Value {
        loop {
            match self.ws.read().expect("Chromium's DevTools socket") {
                tungstenite::Message::Text(t) => return serde_json::from_str(&t).unwrap(),
                _ => continue,
            }
        }
    }

    /// Opens `page` and waits for its load event.
    fn open(&mut self, page: &str) {
        let before = self.events.len();
        self.call("Page.navigate", serde_json::json!({"url": page}));
        let loaded = |e: &serde_json::Value| e["method"] == "Page.loadEventFired";
        if !self.events[before..].iter().any(loaded) {
            loop {
                let e = self.receive();
                let done = loaded(&e);
                self.events.push(e);
                if done {
                    break;
                }
            }
        }
    }

    /// The value of a JavaScript expression (JSON-serialisable).
    fn eval(&mut self, expression: &str) -> serde_json::Value {
        let r = self.call(
            "Runtime.evaluate",
            serde_json::json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expression}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    fn text(&mut self, selector: &str) -> String {
        let v = self.eval(&format!(
            "document.querySelector({}).textContent",
            serde_json::json!(selector)
        ));
        v.as_str()
            .unwrap_or_else(|| panic!("{selector}: {v}"))
            .to_string()
    }

    fn count(&mut self, selector: &str) -> u64 {
        let v = self.eval(&format!(
            "document.querySelectorAll({}).length",
            serde_json::json!(selector)
        ));
        v.as_u64().unwrap()
    }

    /// The centre of `selector`'s element, scrolled into view, in viewport pixels.
    fn centre(&mut self, selector: &str) -> (f64, f64) {
        let v = self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); e.scrollIntoView({{block: 'center'}}); \
             const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            serde_json::json!(selector)
        ));
        (v[0].as_f64().unwrap(), v[1].as_f64().unwrap())
    }

    fn mouse(&mut self, kind: &str, (x, y): (f64, f64)) {
        self.call(
            "Input.dispatchMouseEvent",
            serde_json::json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
        );
    }

    fn click(&mut self, selector: &str) {
        let at = self.centre(selector);
        self.mouse("mouseMoved", at);
        self.mouse("mousePressed", at);
        self.mouse("mouseReleased", at);
    }

    fn hover(&mut self, selector: &str) {
        let at = self.centre(selector);
        self.mouse("mouseMoved", at);
    }

    /// Presses and releases a key that types nothing (`ArrowDown`, `Tab`, ...).
    fn key(&mut self, key: &str, code: u32) {
        for kind in ["rawKeyDown", "keyUp"] {
            self.call(
                "Input.dispatchKeyEvent",
                serde_json::json!({"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code}),
            );
        }
    }

    /// Gives `selector` the keyboard focus, as Tab would.
    fn focus(&mut self, selector: &str) {
        self.eval(&format!(
            "document.querySelector({}).focus()",
            serde_json::json!(selector)
        ));
    }

    fn screenshot(&mut self, path: &Path) -> Vec<u8> {
        use base64::Engine;
        let shot = self.call(
            "Page.captureScreenshot",
            serde_json::json!({"format": "png"}),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        fs::write(path, &png).unwrap();
        png
    }

    /// The page's console messages, uncaught exceptions and log entries so far.
    fn console(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| {
                matches!(
                    e["method"].as_str(),
                    Some("Runtime.consoleAPICalled" | "Runtime.exceptionThrown" | "Log.entryAdded")
                )
            })
            .map(|e| e["params"].to_string())
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_explorer_answers_clicks_and_keys_in_each_state() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = built();
    let root = dir.path();
    let page = root.join("report/build/site/explorer.html");
    let url = format!("file://{}", page.display());
    let shots = shots_dir(root);
    let studies = studies(root);
    let a = &studies[0].analysis;
    let shown = |v: f64| format!("{:.2}", v * 100.0);
    let profile = tempfile::tempdir().unwrap();
    let mut b = Browser::launch(&chromium, profile.path());
    b.open(&url);

    // At first: the first trained model's seed mean, raw, every cutoff; 4 x 4 cells, the
    // oldest row at the bottom; a cell reads the analysis's own value.
    let cnn = &a.models[0];
    assert_eq!(cnn.model, "cnn_s");
    assert_eq!(b.count("#panels svg"), 1);
    assert_eq!(b.count("#panels rect.cell"), 16);
    assert_eq!(b.count("#panels rect.future"), 0);
    let title = b.text("#panels rect.cell[data-i='0'][data-j='1'] title");
    assert_eq!(
        title,
        format!(
            "cnn_s, mean of 2 seeds: trained through 2001, evaluated on 2002: {} (sd {} over the seeds)",
            shown(cnn.mean.get(0, 1).unwrap()),
            shown(cnn.std.get(0, 1).unwrap())
        )
    );
    let bottom = |b: &mut Browser, i: u32| {
        b.eval(&format!(
            "+document.querySelector('#panels rect.cell[data-i=\"{i}\"][data-j=\"0\"]').getAttribute('y')"
        ))
        .as_f64()
        .unwrap()
    };
    assert!(
        bottom(&mut b, 0) > bottom(&mut b, 3),
        "row 2001 is drawn below row 2004"
    );
    let first = b.screenshot(&shots.join("explorer-1-raw.png"));
    assert!(not_blank(&shots.join("explorer-1-raw.png")));

    // Pick the other model with the keyboard, then read a cell by hovering it.
    b.focus("#model");
    b.key("ArrowDown", 40);
    assert_eq!(b.eval("document.getElementById('model').value"), "1");
    assert!(b.text("#panels figcaption").starts_with("mlp_s"));
    b.hover("#panels rect.cell[data-i='1'][data-j='3']");
    let mlp = &a.models[1];
    assert!(
        b.text("#readout").ends_with(&format!(
            "trained through 2002, evaluated on 2004: {} (sd {} over the seeds)",
            shown(mlp.mean.get(1, 3).unwrap()),
            shown(mlp.std.get(1, 3).unwrap())
        )),
        "{}",
        b.text("#readout")
    );

    // Toggle the view with a click: the deviation from the cohort mean, the page's link
    // says so.
    b.click("input[name=view][value=deviation]");
    let title = b.text("#panels rect.cell[data-i='1'][data-j='3'] title");
    let dev = mlp.deviation.get(1, 3).unwrap() * 100.0;
    assert!(
        title.ends_with(&format!(
            "{dev:+.2} from the cohort mean (cell {}, sd {} over the seeds)",
            shown(mlp.mean.get(1, 3).unwrap()),
            shown(mlp.std.get(1, 3).unwrap())
        )),
        "{title}"
    );
    assert!(
        b.eval("location.hash")
            .as_str()
            .unwrap()
            .contains("view=deviation"),
        "the state is linkable"
    );
    let second = b.screenshot(&shots.join("explorer-2-deviation.png"));
    assert_ne!(first, second, "toggling the view changes what is drawn");

    // Step the replay back twice by clicking: two rows not trained yet; then read the
    // matrix by keyboard (focus, arrows; up is a later cutoff).
    b.click("#back");
    b.click("#back");
    assert_eq!(b.text("#through-label"), "trained through 2002 (2 of 4)");
    assert_eq!(b.count("#panels rect.future"), 8);
    // The cursor stays on the cell hovered last (2002, 2004).
    b.focus("#panels svg");
    b.key("ArrowUp", 38);
    b.key("ArrowLeft", 37);
    assert_eq!(
        b.text("#readout"),
        "mlp_s, mean of 2 seeds: trained through 2003, evaluated on 2003: not trained yet at this step of the replay"
    );
    b.click("#forward");
    assert_eq!(b.count("#panels rect.future"), 4);

    // Put cnn_s beside it, and read one seed: both panels follow the cursor, and seed 0
    // of cnn_s has a training history (a loss and a gradient-norm chart, a line per
    // cutoff trained so far), mlp_s's runs have none.
    b.focus("#compare");
    b.key("ArrowDown", 40);
    assert_eq!(b.eval("document.getElementById('compare').value"), "cnn_s");
    assert_eq!(b.count("#panels svg"), 2);
    b.focus("#seed");
    b.key("ArrowDown", 40);
    assert_eq!(b.eval("document.getElementById('seed').value"), "0");
    b.hover("#panels figure:nth-child(2) rect.cell[data-i='0'][data-j='0']");
    let readout = b.text("#readout");
    let seed0 = |m: &drift::analysis::ModelAnalysis| {
        let s = &m.seed_grids[0];
        assert_eq!(s.seed, 0);
        (
            s.grid.get(0, 0).unwrap(),
            s.deviation.as_ref().unwrap().get(0, 0).unwrap(),
        )
    };
    let (cnn_cell, cnn_dev) = seed0(cnn);
    let (mlp_cell, mlp_dev) = seed0(mlp);
    assert_eq!(
        readout,
        format!(
            "mlp_s, seed 0: trained through 2001, evaluated on 2001: {:+.2} from the cohort mean (cell {}) | \
             cnn_s, seed 0: trained through 2001, evaluated on 2001: {:+.2} from the cohort mean (cell {})",
            mlp_dev * 100.0,
            shown(mlp_cell),
            cnn_dev * 100.0,
            shown(cnn_cell)
        )
    );
    assert_eq!(b.count("#history .history"), 2);
    assert!(
        b.text("#history .history:nth-child(1) .note")
            .contains("no training history")
    );
    // Three of four cutoffs trained in the replay: three lines in each of two charts.
    assert_eq!(b.count("#history .history:nth-child(2) polyline"), 6);
    // Forgetting curves: a band and a mean line per model, and the seed's dashed curve.
    assert_eq!(b.count("#forgetting polygon.band"), 2);
    assert_eq!(b.count("#forgetting polyline"), 4);
    b.focus("#forgetting circle.point");
    assert!(
        b.text("#readout").contains("at lag 0: "),
        "{}",
        b.text("#readout")
    );
    b.screenshot(&shots.join("explorer-3-side-by-side.png"));
    assert!(not_blank(&shots.join("explorer-3-side-by-side.png")));

    // A link to a state opens in it.
    b.open("about:blank");
    b.open(&format!(
        "{url}#study=tiny&model=cnn_s&seed=1&view=deviation&through=2002"
    ));
    assert_eq!(b.text("#through-label"), "trained through 2002 (2 of 4)");
    assert!(b.text("#panels figcaption").starts_with("cnn_s"));
    assert!(b.text("#panels figcaption").ends_with("seed 1"));

    assert!(b.console().is_empty(), "{:?}", b.console());
}
