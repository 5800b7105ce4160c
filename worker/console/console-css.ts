/** The console's stylesheet: readable at phone width, visible keyboard focus, no external fonts or images. */
export const CONSOLE_CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #5b6470; --line: #d6dae0; --accent: #2457c5;
  --danger: #b42318; --soft: #f3f5f8; --warn-bg: #fdecea; font-family: system-ui, sans-serif; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ee; --bg: #14171c; --muted: #9aa3ae; --line: #333a44;
  --accent: #7aa2ff; --danger: #ff8a80; --soft: #1d2128; --warn-bg: #3a1d1b; } }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0 auto; max-width: 72rem; padding: 1rem; color: var(--fg); background: var(--bg); line-height: 1.45; }
h1 { font-size: 1.4rem; margin: 0 0 .5rem; overflow-wrap: anywhere; }
h2 { font-size: 1.15rem; }
code { font-family: ui-monospace, monospace; font-size: .9em; overflow-wrap: anywhere; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
button, .button { font: inherit; padding: .35rem .8rem; border: 1px solid var(--line); border-radius: .4rem;
  background: var(--soft); color: var(--fg); cursor: pointer; display: inline-block; }
button:hover, .button:hover { border-color: var(--accent); }
button.danger { color: var(--danger); }
button.link { border: 0; background: none; padding: 0; color: var(--accent); text-align: left; overflow-wrap: anywhere; }
input, select, textarea { font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: .4rem;
  background: var(--bg); color: var(--fg); max-width: 100%; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0 0 1rem; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; }
.badges { display: inline-flex; flex-wrap: wrap; gap: .25rem; }
.badge { font-size: .8rem; padding: .05rem .45rem; border-radius: 1rem; background: var(--soft); border: 1px solid var(--line); }
.right-write, .right-delete { border-color: #d9822b; } .right-subdir { border-color: #7a5af8; }
.badge.refused { background: var(--warn-bg); border-color: var(--danger); color: var(--danger); }
[role=tablist] { display: flex; flex-wrap: wrap; gap: .25rem; border-bottom: 1px solid var(--line); margin-bottom: 1rem; }
[role=tab] { border-radius: .4rem .4rem 0 0; border-bottom: 0; }
[role=tab][aria-selected=true] { background: var(--bg); border-color: var(--accent); font-weight: 600; }
.crumbs ol { list-style: none; display: flex; flex-wrap: wrap; gap: .3rem; padding: 0; margin: 0 0 .75rem; }
.crumbs li + li::before { content: "/"; color: var(--muted); margin-right: .3rem; }
.toolbar { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: .75rem; }
.inline { display: flex; flex-wrap: wrap; gap: .4rem; align-items: center; }
.hint, .note { color: var(--muted); font-size: .9rem; }
.uploads { list-style: none; padding: 0; } .uploads progress { width: 12rem; max-width: 50%; }
.zone { border: 2px dashed transparent; border-radius: .5rem; overflow-x: auto; }
.zone.dragging { border-color: var(--accent); background: var(--soft); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 500; font-size: .9rem; }
.actions { display: flex; flex-wrap: wrap; gap: .3rem; }
td.empty { color: var(--muted); }
.more { margin-top: .5rem; }
.preview { margin-top: 1rem; border: 1px solid var(--line); border-radius: .5rem; padding: .5rem 1rem; }
.preview small { color: var(--muted); font-weight: normal; }
.preview img { max-width: 100%; max-height: 60vh; background: repeating-conic-gradient(#ccc 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
pre.text { counter-reset: line; overflow: auto; max-height: 60vh; margin: 0; font-size: .85rem; }
pre.text .line { display: block; white-space: pre; }
pre.text .line::before { counter-increment: line; content: counter(line); display: inline-block; width: 3.5em;
  margin-right: 1em; text-align: right; color: var(--muted); user-select: none; }
form.share, form.open-cap { display: grid; gap: .4rem; max-width: 36rem; }
fieldset { border: 1px solid var(--line); border-radius: .4rem; display: flex; flex-wrap: wrap; gap: .75rem; }
.minted { margin-top: 1rem; border: 1px solid var(--accent); border-radius: .5rem; padding: .5rem 1rem; }
.copyable { display: grid; gap: .2rem; margin-bottom: .5rem; } .copyable input { flex: 1; min-width: 12rem; font-family: ui-monospace, monospace; }
textarea.jwk, #share-holder-jwk { flex: 1; min-width: 12rem; font-family: ui-monospace, monospace; font-size: .85rem; }
#share-holder-jwk { flex-basis: 100%; }
.key-place { margin-top: 1.5rem; }
pre.config { background: var(--soft); padding: .5rem; overflow-x: auto; }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 1.5rem; }
ul.tree { padding-left: 0; }
ul.tree li { position: relative; padding: .4rem 0 0 1rem; }
ul.tree ul li::before { content: ""; position: absolute; left: -.5rem; top: 0; bottom: 0; border-left: 2px solid var(--line); }
ul.tree ul li:last-child::before { bottom: auto; height: 1.6rem; }
ul.tree ul li::after { content: ""; position: absolute; left: -.5rem; top: 1.6rem; width: 1.4rem; border-top: 2px solid var(--line); }
.node { display: inline-flex; flex-wrap: wrap; align-items: center; gap: .2rem .6rem; border: 1px solid var(--line);
  border-radius: .5rem; padding: .25rem .6rem; background: var(--soft); max-width: 100%; }
.node.self { border-color: var(--accent); }
.node .unlabelled { font-weight: 500; font-style: italic; }
.node .expiry { color: var(--muted); font-size: .85rem; }
.node button { padding: .1rem .5rem; font-size: .9rem; }
ul.tree li { padding-top: .25rem; }
ul.tree ul li:last-child::before { height: 1.2rem; } ul.tree ul li::after { top: 1.2rem; }
tr.refused td { background: var(--warn-bg); }
#status { position: sticky; top: 0; z-index: 2; background: var(--bg); min-height: 2rem; padding: .25rem 0;
  display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; } #status.error { color: var(--danger); }
#status button.undo { font-weight: 600; border-color: var(--accent); }
td .actions button { font-size: .85rem; padding: .15rem .5rem; }
.files-body.split { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; align-items: start; }
.files-body.split .preview-pane { position: sticky; top: 2.5rem; max-height: calc(100vh - 3rem); overflow: auto; }
.files-body.split .preview-pane > * { margin-top: 0; }
.files-body.split .entries th:nth-child(3), .files-body.split .entries td:nth-child(3) { display: none; }
.zone.drop-only { border-color: var(--line); padding: 2.5rem 1rem; text-align: center; }
.zone.drop-only.dragging { border-color: var(--accent); }
.progress-text { color: var(--muted); font-size: .9rem; font-variant-numeric: tabular-nums; }
.history { border: 1px solid var(--line); border-radius: .5rem; padding: .5rem 1rem; }
.history h2 { margin-top: .25rem; }
.history .version-view .preview { border: 0; padding: 0; }
.actor.self { font-weight: 600; }
.gone { text-align: center; padding: 3rem 1rem; }
@media (max-width: 60rem) {
  .files-body.split { display: block; }
  .files-body.split .preview-pane { position: static; max-height: none; }
}
@media (max-width: 40rem) {
  body { padding: .5rem; }
  th:nth-child(3), td:nth-child(3) { display: none; }
}
`;
