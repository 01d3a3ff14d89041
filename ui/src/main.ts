// Entry point of the web view.
import "./styles.css";
import { mountServers } from "./features/servers/page";

const root = document.getElementById("app");
if (root) mountServers(root);
