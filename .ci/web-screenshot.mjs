// Opens each example's page in headless Chromium, waits until the example has presented frames, and
// saves a screenshot: `node web-screenshot.mjs URL OUT_DIR NAME...`. Fails (exit 1) on a panic or an
// uncaught error in the page, or on too few frames. Called by `.ci/web`, which serves the pages and
// installs playwright-core for this script.
import { chromium } from "playwright-core";

const [base, outDir, ...names] = process.argv.slice(2);
// Frames the example must present, and how long it has: software WebGL2 draws a few a second.
const FRAMES = 60;
const TIMEOUT_MS = 240_000;

// A fresh profile for every launch is Playwright's own doing; the flags give software WebGL2 and keep
// Chromium off this machine's closed network.
const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
        "--no-sandbox",
        "--use-angle=swiftshader",
        "--enable-unsafe-swiftshader",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ],
});
let failed = false;
for (const name of names) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    const problems = [];
    page.on("console", (message) => {
        if (message.text().includes("panicked at")) problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(`uncaught: ${error}`));
    const started = Date.now();
    await page.goto(`${base}/${name}/index.html`);
    try {
        await page.waitForFunction((frames) => window.framesPresented >= frames, FRAMES, {
            timeout: TIMEOUT_MS,
            polling: 500,
        });
    } catch {
        const presented = await page.evaluate(() => window.framesPresented);
        problems.push(`${presented} frames presented in ${TIMEOUT_MS / 1000} s, fewer than ${FRAMES}`);
    }
    await page.screenshot({ path: `${outDir}/${name}.png` });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(`${name}: ${FRAMES} frames in ${seconds} s, screenshot ${outDir}/${name}.png`);
    for (const problem of problems) {
        console.log(`FAILED: ${name}: ${problem.slice(0, 2000)}`);
        failed = true;
    }
    await page.close();
}
await browser.close();
process.exit(failed ? 1 : 0);
