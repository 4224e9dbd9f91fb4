import { Suspense } from "react";
import { Navigate, Route, Routes } from "react-router-dom";

import { AppLayout } from "./components/AppLayout";
import { Loading } from "./components/QueryState";
import { lazyPage } from "./lazyPage";
import { pathPage, targetPage } from "./routeChunks";

// Each page is its own chunk, fetched when first shown: a path page's first load carries
// the path page, not the mesh editor and the people admin (make bench-ui). Navigations are
// transitions, so a later page's chunk loads while the old page stays on screen.
const AgentsPage = lazyPage(() => import("./pages/AgentsPage").then((module) => module.AgentsPage)).Page;
const AlertSettingsPage = lazyPage(() => import("./pages/AlertSettingsPage").then((module) => module.AlertSettingsPage)).Page;
const AuditPage = lazyPage(() => import("./pages/AuditPage").then((module) => module.AuditPage)).Page;
const GridPage = lazyPage(() => import("./pages/GridPage").then((module) => module.GridPage)).Page;
const IncidentPage = lazyPage(() => import("./pages/IncidentPage").then((module) => module.IncidentPage)).Page;
const FindingsPage = lazyPage(() => import("./pages/FindingsPage").then((module) => module.FindingsPage)).Page;
const IncidentsPage = lazyPage(() => import("./pages/IncidentsPage").then((module) => module.IncidentsPage)).Page;
const LoginPage = lazyPage(() => import("./pages/LoginPage").then((module) => module.LoginPage)).Page;
const MeshEditorPage = lazyPage(() => import("./pages/MeshEditorPage").then((module) => module.MeshEditorPage)).Page;
const MeshesPage = lazyPage(() => import("./pages/MeshesPage").then((module) => module.MeshesPage)).Page;
const NotFoundPage = lazyPage(() => import("./pages/NotFoundPage").then((module) => module.NotFoundPage)).Page;
const PathPage = pathPage.Page;
const PathsPage = lazyPage(() => import("./pages/PathsPage").then((module) => module.PathsPage)).Page;
const PeoplePage = lazyPage(() => import("./pages/PeoplePage").then((module) => module.PeoplePage)).Page;
const SchedulePage = lazyPage(() => import("./pages/SchedulePage").then((module) => module.SchedulePage)).Page;
const TokensPage = lazyPage(() => import("./pages/TokensPage").then((module) => module.TokensPage)).Page;
const TargetPage = targetPage.Page;
const TargetsTable = lazyPage(() => import("./pages/target/TargetsTable").then((module) => module.TargetsTable)).Page;

export function App() {
  return (
    <Suspense fallback={<Loading what="the page" />}>
      <Routes>
        <Route path="/login" element={<LoginPage />} />
        <Route element={<AppLayout />}>
          <Route index element={<Navigate to="/paths" replace />} />
          <Route path="/paths" element={<PathsPage externalTargets={<TargetsTable />} />} />
          <Route path="/paths/:source/:destination" element={<PathPage />} />
          <Route path="/targets/:source/:target" element={<TargetPage />} />
          <Route path="/grid" element={<GridPage />} />
          <Route path="/meshes" element={<MeshesPage />} />
          <Route path="/meshes/new" element={<MeshEditorPage />} />
          <Route path="/meshes/:name" element={<MeshEditorPage />} />
          <Route path="/agents" element={<AgentsPage />} />
          <Route path="/schedule" element={<SchedulePage />} />
          <Route path="/findings" element={<FindingsPage />} />
          <Route path="/incidents" element={<IncidentsPage />} />
          <Route path="/incidents/:id" element={<IncidentPage />} />
          <Route path="/alerts/settings" element={<AlertSettingsPage />} />
          <Route path="/people" element={<PeoplePage />} />
          <Route path="/tokens" element={<TokensPage />} />
          <Route path="/audit" element={<AuditPage />} />
          <Route path="*" element={<NotFoundPage />} />
        </Route>
      </Routes>
    </Suspense>
  );
}

