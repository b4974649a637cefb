import { render } from "preact";
import { App } from "./app.tsx";

const root = document.getElementById("app")!;
// The server's "Loading…" placeholder goes: Preact renders into an empty container.
root.textContent = "";
render(<App />, root);
