/** Entry point: mounts the console. */
import { render } from 'preact';
import { App } from './ui/App.js';
// Fonts bundled into the build and served by vdb: the console needs no network beyond vdb.
import '@fontsource/inter/400.css';
import '@fontsource/inter/600.css';
import '@fontsource/inter/700.css';
import '@fontsource/jetbrains-mono/400.css';
import './styles.css';

render(<App />, document.getElementById('app')!);
