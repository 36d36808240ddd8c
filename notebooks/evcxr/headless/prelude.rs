// scripts/run-notebooks only. evcxr catches a panicking cell, prints the message and
// reports the cell as a success, so the next cells run and the notebook "passes". Ending
// the kernel's child process at the panic makes the cell fail instead, with the message.
//
// The message goes out as one line, then the child waits a moment before it exits:
// evcxr forwards the child's stderr from a reader thread and reports the cell as soon
// as it sees the child end, so a message written in pieces just before `exit` lost its
// second line on a loaded 2-core CI machine ("panicked at src/lib.rs:109:6:" alone).
std::panic::set_hook(Box::new(|info| {
    use std::io::Write;
    let message = info
        .payload()
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| info.payload().downcast_ref::<String>().cloned())
        .unwrap_or_default();
    let location = info
        .location()
        .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
        .unwrap_or_default();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "panicked at {location}: {message}");
    let _ = err.flush();
    drop(err);
    std::thread::sleep(std::time::Duration::from_millis(500));
    std::process::exit(101);
}));
